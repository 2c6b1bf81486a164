# Writes the source revision of a build (git describe --always --dirty) to OUT, rewriting the
# file only when it changes. Run at every build by the source_revision target, so that a build
# directory says what it was built from even after its checkout has moved on: benchmark scripts
# record it next to their results.
# Arguments: -DGIT=<git executable> -DSOURCE_DIR=<checkout> -DOUT=<file>
execute_process(
  COMMAND "${GIT}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE revision
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown (not a git checkout)")
endif()
set(text "${revision}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
