# Runs the kryflow CLI once and checks its exact exit status and substrings of its output.
#
#   cmake -DKRYFLOW=<exe> -DARGS="solve|--backend|cpu" -DEXPECTED=0
#         [-DSTDOUT_HAS="a|b"] [-DSTDERR_HAS="c"] [-DJSON_FIELD=status -DJSON_VALUE=converged]
#         [-DJSON_BELOW_FIELD=max_error -DJSON_BELOW_VALUE=1e-5]
#         [-DMANIFEST=tests/data/bad/expected.txt -DBAD_FILE=<file>] -P expect_exit.cmake
#
# ARGS and the *_HAS lists are separated by '|'. JSON_FIELD parses stdout as JSON and compares
# that top-level field; JSON_BELOW_FIELD requires that numeric top-level field to be below
# JSON_BELOW_VALUE (compared by python3). With MANIFEST, BAD_FILE's entry (<name> <line> <message part>) adds
# "<BAD_FILE>:<line>: " and the message part to STDERR_HAS; a file without an entry fails.
cmake_minimum_required(VERSION 3.24)

foreach(required KRYFLOW EXPECTED)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "expect_exit.cmake: -D${required}=... is required")
  endif()
endforeach()

string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" stdout_has "${STDOUT_HAS}")
string(REPLACE "|" ";" stderr_has "${STDERR_HAS}")

if(DEFINED MANIFEST)
  get_filename_component(name "${BAD_FILE}" NAME)
  file(STRINGS "${MANIFEST}" entries)
  set(found FALSE)
  foreach(entry IN LISTS entries)
    if(entry MATCHES "^([^ #]+) ([0-9]+) (.*)$" AND CMAKE_MATCH_1 STREQUAL name)
      list(APPEND stderr_has "${BAD_FILE}:${CMAKE_MATCH_2}: " "${CMAKE_MATCH_3}")
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${name} has no entry in ${MANIFEST}")
  endif()
endif()

execute_process(COMMAND "${KRYFLOW}" ${args}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(problems "")
if(NOT status STREQUAL EXPECTED)
  string(APPEND problems "exit status ${status}, expected ${EXPECTED}\n")
endif()
foreach(part IN LISTS stdout_has)
  string(FIND "${out}" "${part}" at)
  if(at EQUAL -1)
    string(APPEND problems "stdout lacks '${part}'\n")
  endif()
endforeach()
foreach(part IN LISTS stderr_has)
  string(FIND "${err}" "${part}" at)
  if(at EQUAL -1)
    string(APPEND problems "stderr lacks '${part}'\n")
  endif()
endforeach()
if(DEFINED JSON_FIELD)
  string(JSON value ERROR_VARIABLE json_error GET "${out}" "${JSON_FIELD}")
  if(json_error)
    string(APPEND problems "stdout is not a JSON object with '${JSON_FIELD}': ${json_error}\n")
  elseif(NOT value STREQUAL JSON_VALUE)
    string(APPEND problems "JSON field ${JSON_FIELD} is '${value}', expected '${JSON_VALUE}'\n")
  endif()
endif()

if(DEFINED JSON_BELOW_FIELD)
  string(JSON value ERROR_VARIABLE json_error GET "${out}" "${JSON_BELOW_FIELD}")
  find_program(python3 NAMES python3)
  if(json_error)
    string(APPEND problems
           "stdout is not a JSON object with '${JSON_BELOW_FIELD}': ${json_error}\n")
  elseif(NOT python3)
    string(APPEND problems "python3 is needed to compare ${JSON_BELOW_FIELD}\n")
  else()
    # CMake compares no floating-point numbers: python3 does.
    execute_process(COMMAND ${python3} -c
                            "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)"
                            "${value}" "${JSON_BELOW_VALUE}" RESULT_VARIABLE below)
    if(NOT below EQUAL 0)
      string(APPEND problems
             "JSON field ${JSON_BELOW_FIELD} is ${value}, expected below ${JSON_BELOW_VALUE}\n")
    endif()
  endif()
endif()

if(problems)
  string(REPLACE ";" " " command "${KRYFLOW} ${args}")
  message(FATAL_ERROR "${command}\n${problems}--- stdout\n${out}--- stderr\n${err}")
endif()
