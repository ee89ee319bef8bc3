# Run by cmake --install (LboInstall.cmake): installs cluster script LBO_SCRIPT into
# LBO_DESTINATION with its one line starting `installed_lbo=` replaced by the installed lbo's
# path, so a copy that sbatch spools elsewhere still finds it. The path is the one the files will
# have at run time: LBO_BINDIR/lbo under the prefix given at install time, without DESTDIR (a
# staging root for packagers, which file(INSTALL) prepends to where the file is written).
# The script is written to LBO_STAGING_DIR first, so the install manifest lists it.
get_filename_component(prefix "${CMAKE_INSTALL_PREFIX}" ABSOLUTE BASE_DIR "$ENV{PWD}")
if(IS_ABSOLUTE "${LBO_BINDIR}")
  set(lbo "${LBO_BINDIR}/lbo")
else()
  set(lbo "${prefix}/${LBO_BINDIR}/lbo")
endif()
# A path the shell would split or expand is single-quoted (' written as '\'').
if(lbo MATCHES "^[A-Za-z0-9_./+@%:,=-]+$")
  set(value "${lbo}")
else()
  string(REPLACE "'" "'\\''" value "${lbo}")
  set(value "'${value}'")
endif()

get_filename_component(name "${LBO_SCRIPT}" NAME)
file(READ "${LBO_SCRIPT}" text)
# CMake's regular expressions have no multi-line mode: a leading newline makes "\n" mark the
# start of every line, the first included.
string(REGEX MATCHALL "\ninstalled_lbo=" lines "\n${text}")
list(LENGTH lines count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "${LBO_SCRIPT}: ${count} lines start with `installed_lbo=`, expected exactly "
                      "one (`installed_lbo=  # ...`), into which cmake --install writes ${lbo}")
endif()
string(REGEX MATCH "\ninstalled_lbo=[^\n]*" line "\n${text}")
string(REPLACE "${line}" "\ninstalled_lbo=${value}" text "\n${text}")  # literal: the path is no regex
string(SUBSTRING "${text}" 1 -1 text)

file(WRITE "${LBO_STAGING_DIR}/${name}" "${text}")
if(IS_ABSOLUTE "${LBO_DESTINATION}")
  set(destination "${LBO_DESTINATION}")
else()
  set(destination "${prefix}/${LBO_DESTINATION}")
endif()
file(INSTALL "${LBO_STAGING_DIR}/${name}" DESTINATION "${destination}" TYPE PROGRAM)
