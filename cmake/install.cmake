# `cmake --install`: headers, the static and shared libraries, the presets, the command-line
# tool, a CMake package (find_package(kryflow): kryflow::kryflow, the shared library, and
# kryflow::kryflow_static) and a pkg-config file (kryflow.pc).
include(CMakePackageConfigHelpers)

set(KRYFLOW_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kryflow)
set(_kryflow_export_targets kryflow kryflow_shared)
if(KRYFLOW_WITH_OPENMP)
  set_target_properties(kryflow_openmp PROPERTIES EXPORT_NAME openmp)
  list(APPEND _kryflow_export_targets kryflow_openmp)
endif()
install(TARGETS ${_kryflow_export_targets} EXPORT kryflowTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kryflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/bindings/c/kryflow.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kryflow/configs
        FILES_MATCHING PATTERN "*.json")
install(EXPORT kryflowTargets NAMESPACE kryflow:: DESTINATION ${KRYFLOW_INSTALL_CMAKEDIR})

set(KRYFLOW_CONFIG_WITH_CUDA ${KRYFLOW_WITH_CUDA})
set(KRYFLOW_CONFIG_WITH_OPENMP ${KRYFLOW_WITH_OPENMP})
set(KRYFLOW_CONFIG_OPENMP_RUNTIME ${KRYFLOW_OPENMP_RUNTIME_USED})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kryflowConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kryflowConfig.cmake
                              INSTALL_DESTINATION ${KRYFLOW_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kryflowConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kryflowConfig.cmake
              ${PROJECT_BINARY_DIR}/kryflowConfigVersion.cmake
        DESTINATION ${KRYFLOW_INSTALL_CMAKEDIR})

# pkg-config: the shared library; its dependencies are private (Libs.private for static links).
set(_kryflow_pc_private "-lz -llapack")
if(KRYFLOW_WITH_CUDA)
  string(APPEND _kryflow_pc_private " -L${CUDAToolkit_LIBRARY_DIR} -lcusolver -lcusparse -lcublas -lcudart")
endif()
if(KRYFLOW_WITH_OPENMP)
  if(KRYFLOW_LIBOMP)
    string(APPEND _kryflow_pc_private " ${KRYFLOW_LIBOMP} -lpthread")
  else()
    string(APPEND _kryflow_pc_private " ${OpenMP_CXX_FLAGS}")
  endif()
endif()
set(KRYFLOW_PC_LIBS_PRIVATE ${_kryflow_pc_private})
configure_file(${PROJECT_SOURCE_DIR}/cmake/kryflow.pc.in ${PROJECT_BINARY_DIR}/kryflow.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kryflow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Fortran module's source (a .mod file is specific to one compiler: users compile it).
install(FILES ${PROJECT_SOURCE_DIR}/bindings/fortran/kryflow.f90
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kryflow/fortran)
