# `cmake --install build --prefix P` (README.md, Installing) puts
#   P/bin/lbo
#   P/include/lbo/<module>/            the libraries' public headers
#   P/lib/liblbo_<module>.a            the libraries, static
#   P/lib/cmake/lbo/                   the CMake package: find_package(lbo), targets lbo::<module>
#   P/share/lbo/slurm.sbatch, pbs.sh   the cluster scripts, pointing at P/bin/lbo
#   P/share/lbo/examples/              the example jobs with their objectives and data
#   P/share/lbo/python/lbo_trial.py    the objectives' Python helper (on every trial's PYTHONPATH)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LBO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lbo CACHE STRING
    "Where the CMake package goes, relative to the install prefix")
set(_lbo_modules surrogate jobs workers cluster orchestrator/store orchestrator/policy orchestrator/outputs
    orchestrator/fidelity orchestrator/master report)

set(_lbo_libraries lbo_surrogate lbo_jobs lbo_workers lbo_cluster lbo_store lbo_policy lbo_outputs lbo_fidelity lbo_master
    lbo_orchestrator lbo_report)
# Code that embeds them is compiled for the instruction set they were (cmake/LboArch.cmake).
if(LBO_ARCH_FLAGS)
  foreach(library IN LISTS _lbo_libraries)
    target_compile_options(${library} INTERFACE $<INSTALL_INTERFACE:${LBO_ARCH_FLAGS}>)
  endforeach()
endif()
install(TARGETS ${_lbo_libraries} EXPORT lboTargets INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The installed lbo keeps the run paths of libraries from outside the system's folders (an MPI
# of a cluster's module), as the built one has them.
set_target_properties(lbo PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS lbo)
foreach(module IN LISTS _lbo_modules)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/include/ TYPE INCLUDE)
endforeach()

install(EXPORT lboTargets NAMESPACE lbo:: DESTINATION ${LBO_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/lboConfig.cmake.in ${PROJECT_BINARY_DIR}/lboConfig.cmake
                              INSTALL_DESTINATION ${LBO_INSTALL_CMAKEDIR})
# Semantic versioning's 0.y rule: until 1.0, a minor release may change the headers and the
# libraries' API, so find_package(lbo 0.1) accepts 0.1.z only. From 1.0 on: SameMajorVersion.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lboConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lboConfig.cmake ${PROJECT_BINARY_DIR}/lboConfigVersion.cmake
        DESTINATION ${LBO_INSTALL_CMAKEDIR})

# The cluster scripts are rewritten at install time, when the prefix is known (cmake --install
# --prefix overrides the configured one): their `installed_lbo=` line gets the installed lbo.
foreach(script slurm.sbatch pbs.sh)
  install(CODE "
    set(LBO_SCRIPT \"${PROJECT_SOURCE_DIR}/cluster/scripts/${script}\")
    set(LBO_STAGING_DIR \"${PROJECT_BINARY_DIR}/install-staging\")
    set(LBO_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
    set(LBO_DESTINATION \"${CMAKE_INSTALL_DATADIR}/lbo\")
    include(\"${PROJECT_SOURCE_DIR}/cmake/install_cluster_script.cmake\")")
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/python/lbo_trial.py DESTINATION ${CMAKE_INSTALL_DATADIR}/lbo/python)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/jobs/examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/lbo/examples
        PATTERN __pycache__ EXCLUDE)
