# The OpenMP runtime of the cpu backend, as the interface target kryflow_openmp.
#
# kryflow makes idle OpenMP threads sleep instead of spinning (docs/decisions/004): LLVM's libomp
# (and Intel's) take kmp_set_blocktime(0) at run time, while GCC's libgomp reads its wait policy
# once, from the environment, when it is loaded, before any code of the program runs. So with GCC,
# KRYFLOW_OPENMP_RUNTIME=auto compiles with -fopenmp (GCC emits calls to the GOMP_* entry points,
# which libomp implements) and links LLVM's libomp in place of libgomp where it is found; llvm
# requires it; compiler keeps the compiler's own runtime. Clang and Intel compilers link a runtime
# with kmp_set_blocktime already.
add_library(kryflow_openmp INTERFACE)
set(KRYFLOW_OPENMP_RUNTIME_USED "compiler")
if(NOT KRYFLOW_OPENMP_RUNTIME STREQUAL "compiler" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  file(GLOB _kryflow_llvm_dirs LIST_DIRECTORIES true /usr/lib/llvm-*/lib /usr/local/opt/libomp/lib)
  list(SORT _kryflow_llvm_dirs COMPARE NATURAL ORDER DESCENDING)
  find_library(KRYFLOW_LIBOMP NAMES omp HINTS ${_kryflow_llvm_dirs}
               DOC "LLVM's OpenMP runtime (libomp), linked in place of libgomp")
  if(KRYFLOW_LIBOMP)
    find_package(Threads REQUIRED)
    target_compile_options(kryflow_openmp INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${OpenMP_CXX_FLAGS}>)
    target_link_libraries(kryflow_openmp INTERFACE ${KRYFLOW_LIBOMP} Threads::Threads)
    set(KRYFLOW_OPENMP_RUNTIME_USED "llvm")
  elseif(KRYFLOW_OPENMP_RUNTIME STREQUAL "llvm")
    message(FATAL_ERROR "KRYFLOW_OPENMP_RUNTIME=llvm: LLVM's libomp not found (Debian: libomp-dev)")
  else()
    message(WARNING "LLVM's libomp not found (Debian: libomp-dev): the cpu backend uses libgomp, "
                    "whose idle threads spin unless OMP_WAIT_POLICY=PASSIVE is set "
                    "(docs/decisions/004-cpu-backend-parallel-regions.md)")
  endif()
endif()
if(KRYFLOW_OPENMP_RUNTIME_USED STREQUAL "compiler")
  target_link_libraries(kryflow_openmp INTERFACE OpenMP::OpenMP_CXX)
endif()
message(STATUS "kryflow OpenMP runtime: ${KRYFLOW_OPENMP_RUNTIME_USED} ${KRYFLOW_LIBOMP}")
