# Installs the lookup component into a scratch prefix, builds docs/examples/lookup against it with
# find_package(autotune), and runs the example on the fixture database: what another project does.
# Arguments: BUILD_DIR SOURCE_DIR WORK_DIR DB
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component lookup --prefix ${WORK_DIR}/prefix
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/docs/examples/lookup -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${WORK_DIR}/build/lookup_example ${DB} gemm M=256,N=256,K=256 cuda:sm_90
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "exact answer from gemm\\[M=256,N=256,K=256\\]" OR NOT out MATCHES "launch 0: autotune_gemm_")
  message(FATAL_ERROR "lookup_example (exact) failed: rc=${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/lookup_example ${DB} gemm M=200,N=300,K=100 cpu --nearest
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "approximate answer from gemm\\[")
  message(FATAL_ERROR "lookup_example (nearest) failed: rc=${rc}")
endif()
