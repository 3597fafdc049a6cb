# ctest driver (test/CMakeLists.txt): install the build tree into a scratch
# prefix, move the prefix (the package must be relocatable), check that no
# installed CMake, header or lit file names this build or source tree, then
# configure and build the consumer project against the moved prefix alone
# and run its C program and its lit tests.
# -D: BUILD (mxmoe build dir), SRC (this directory), CC, CXX, LIT.
set(root "${BUILD}/cmake-consumer")
set(staged "${root}/staged")
set(prefix "${root}/prefix")
set(work "${root}/build")
file(REMOVE_RECURSE "${root}")

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake-consumer step failed (${rc}): ${ARGN}")
  endif()
endfunction()

run_step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${staged}
         --component mxmoe)
file(RENAME "${staged}" "${prefix}")
get_filename_component(mxmoe_src "${SRC}/../.." ABSOLUTE)
file(GLOB_RECURSE installed_text "${prefix}/lib/cmake/*" "${prefix}/include/*")
foreach(f ${installed_text})
  file(READ "${f}" text)
  foreach(tree "${BUILD}" "${mxmoe_src}" "${staged}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "installed ${f} names ${tree}: not relocatable")
    endif()
  endforeach()
endforeach()

run_step(${CMAKE_COMMAND} -S ${SRC} -B ${work} -G Ninja
         -DCMAKE_C_COMPILER=${CC} -DCMAKE_CXX_COMPILER=${CXX}
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run_step(${CMAKE_COMMAND} --build ${work})
run_step(${work}/mxmoe_consumer)
run_step(${LIT} -sv ${work}/test)
