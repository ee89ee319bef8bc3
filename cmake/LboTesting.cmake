include(GoogleTest)

option(LBO_UNITY_TESTS "Compile the unit tests as unity builds (batches of 8 files)" ON)

# lbo_add_unit_test(<name> SOURCES <files...> LIBRARIES <targets...>)
# One GoogleTest binary per module; each TEST becomes a ctest case labelled `unit`.
function(lbo_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # A unity build: each batch of test files is compiled as one translation unit, so GoogleTest,
  # Eigen and the instantiations they share are compiled once per batch, not once per file
  # (bench/README.md, "Build time"). The files of a batch share one anonymous namespace: two of
  # them defining a helper of the same name and parameters fail to build, and a helper must not
  # rely on overloads that another file's helper of the same name could win.
  if(LBO_UNITY_TESTS)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    # GCC warns of a type from an anonymous namespace in an included file (a fixture, here), as
    # it would be a different type in each file including it; a batch includes each file once.
    target_compile_options(${name} PRIVATE -Wno-subobject-linkage)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} lbo_warnings GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    LBO_TEST_OBJECTIVE="$<TARGET_FILE:lbo-test-objective>"
    LBO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(${name} lbo-test-objective)
  gtest_discover_tests(${name} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
endfunction()

# The launcher for MPI tests: mpirun with the flags this machine needs (root, oversubscription).
set(LBO_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe)
execute_process(COMMAND id -u OUTPUT_VARIABLE _lbo_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_lbo_uid STREQUAL "0")
  list(APPEND LBO_MPIRUN --allow-run-as-root)
endif()

# lbo_add_mpi_test(<name> RANKS <n> COMMAND <cmd...>)
# Runs <cmd> under `mpirun -n <n>`; labelled `mpi`.
function(lbo_add_mpi_test name)
  cmake_parse_arguments(ARG "" "RANKS" "COMMAND" ${ARGN})
  add_test(NAME ${name} COMMAND ${LBO_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${ARG_RANKS} ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 300)
endfunction()

string(JOIN " " _lbo_mpirun_string ${LBO_MPIRUN})

# lbo_add_integration_test(<name> COMMAND <cmd...> [LABELS <labels...>] [COST <seconds>])
# COST: about how long the test takes on 2 idle cores (default 10). A first `ctest -j` (a clean
# clone has no timings yet) starts the costliest first, so the long ones do not end the run on
# one core while the other idles.
function(lbo_add_integration_test name)
  cmake_parse_arguments(ARG "" "COST" "COMMAND;LABELS" ${ARGN})
  if(NOT ARG_COST)
    set(ARG_COST 10)
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "integration;${ARG_LABELS}" TIMEOUT 600 COST ${ARG_COST}
    ENVIRONMENT "LBO_BIN=$<TARGET_FILE:lbo>;LBO_TEST_OBJECTIVE=$<TARGET_FILE:lbo-test-objective>;LBO_MPIRUN=${_lbo_mpirun_string}")
endfunction()
