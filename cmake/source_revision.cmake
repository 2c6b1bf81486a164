# Writes the source revision of a build (git describe --always --dirty) to OUT, and, with
# -DOUT_CPP=<file>, as the definition of shmcoll::bench::source_revision() (bench/revision.hpp)
# to OUT_CPP; each file is rewritten only when it changes. Run at every build by the
# source_revision target, so that a build directory and its benchmark programs say what they
# were built from even after the checkout has moved on: results record it.
# Arguments: -DGIT=<git executable> -DSOURCE_DIR=<checkout> -DOUT=<file> [-DOUT_CPP=<file>]
if(GIT)
  execute_process(
    COMMAND "${GIT}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
    OUTPUT_VARIABLE revision
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE status)
endif()
if(NOT GIT OR NOT status EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown (not a git checkout)")
endif()

function(write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()

if(OUT)
  write_if_changed("${OUT}" "${revision}\n")
endif()
if(OUT_CPP)
  write_if_changed("${OUT_CPP}"
    "#include \"revision.hpp\"\nconst char* shmcoll::bench::source_revision() { return \"${revision}\"; }\n")
endif()
