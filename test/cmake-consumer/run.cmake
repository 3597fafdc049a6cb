# ctest driver: install the build tree into a scratch prefix, configure and
# build the consumer project against it with find_package(MXMoE), run it.
set(prefix "${BUILD}/cmake-consumer/prefix")
set(work "${BUILD}/cmake-consumer/build")
file(REMOVE_RECURSE "${BUILD}/cmake-consumer")
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD};--prefix;${prefix};--component;mxmoe"
    "${CMAKE_COMMAND};-S;${SRC};-B;${work};-G;Ninja;-DCMAKE_C_COMPILER=${CC};-DCMAKE_PREFIX_PATH=${prefix}"
    "${CMAKE_COMMAND};--build;${work}"
    "${work}/mxmoe_consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake-consumer step failed (${rc}): ${step}")
  endif()
endforeach()
