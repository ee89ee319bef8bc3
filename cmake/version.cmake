# Writes OUT, the source of lbo::orchestrator::lbo_version(): the project version, and the git
# commit of SOURCE_DIR with "-dirty" when its tracked files differ from it. Run at every build
# (a custom target); configure_file rewrites OUT only when that text changes, so a build
# recompiles one file when the commit changes and nothing otherwise.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
set(LBO_FULL_VERSION "${VERSION}")
if(NOT failed AND commit)
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE dirty ERROR_QUIET)
  set(LBO_FULL_VERSION "${VERSION}+${commit}")
  if(dirty)
    set(LBO_FULL_VERSION "${LBO_FULL_VERSION}-dirty")
  endif()
endif()
configure_file(${TEMPLATE} ${OUT} @ONLY)
