# tests/install/consumer_test.cmake — installs glasstorch into a scratch prefix, builds the
# consumer project against it with find_package, runs it and checks its output; then runs
# the two command-line tools installed beside the library, glassrun and glass-dot.
# Run as: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P consumer_test.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build"
    -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")

set(expected "tensor([[10., 21., 32.],
        [13., 24., 35.]])
tensor([[ 5., 14.],
        [14., 50.]])
5
tensor([[0., 0., 0.],
        [1., 2., 3.]])
")
if(NOT last_output STREQUAL expected)
  message(FATAL_ERROR "consumer printed:\n${last_output}\nexpected:\n${expected}")
endif()

# glassrun from the prefix: two ranks, each with torchrun's variables, each line prefixed
# with its rank (the order of the two lines is the scheduler's).
run("${WORK_DIR}/prefix/bin/glassrun" --nproc-per-node 2 /bin/sh -c
    "echo rank $RANK of $WORLD_SIZE, local rank $LOCAL_RANK")
foreach(rank 0 1)
  if(NOT last_output MATCHES "\\[rank ${rank}\\] rank ${rank} of 2, local rank ${rank}\n")
    message(FATAL_ERROR "installed glassrun printed:\n${last_output}\nwithout rank ${rank}'s line")
  endif()
endforeach()
run("${WORK_DIR}/prefix/bin/glass-dot" --help)
if(NOT last_output MATCHES "usage: glass-dot")
  message(FATAL_ERROR "installed glass-dot --help printed:\n${last_output}")
endif()
message(STATUS "installed glasstorch works from an outside project, with glassrun and glass-dot")
