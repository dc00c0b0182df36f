# Installs the lookup component into a scratch prefix, builds docs/examples/lookup against it with
# find_package(autotune), and runs the example on the fixture database: what another project does.
# Then builds the same example with the C compiler and pkg-config's flags alone, and checks the
# library's soname against the project version.
# Arguments: BUILD_DIR SOURCE_DIR WORK_DIR DB VERSION
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

# pkg-config: the flags alone build and link the example (run-time path from the prefix).
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "")
file(GLOB pc_dirs ${WORK_DIR}/prefix/lib*/pkgconfig ${WORK_DIR}/prefix/lib/*/pkgconfig)
list(JOIN pc_dirs ":" pc_path)
set(ENV{PKG_CONFIG_PATH} "${pc_path}")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs autotune-lookup OUTPUT_VARIABLE flags
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${PKG_CONFIG} --modversion autotune-lookup OUTPUT_VARIABLE pc_version
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config says version ${pc_version}, the project is ${VERSION}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND cc -std=c11 ${SOURCE_DIR}/docs/examples/lookup/lookup_example.c ${flags} -o
                        ${WORK_DIR}/lookup_example_pc COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCH "-L([^ ;]+)" _ "${flags}")
set(libdir ${CMAKE_MATCH_1})
set(ENV{LD_LIBRARY_PATH} "${libdir}")
execute_process(COMMAND ${WORK_DIR}/lookup_example_pc ${DB} gemm M=256,N=256,K=256 cuda:sm_90
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "exact answer from gemm\\[M=256,N=256,K=256\\]")
  message(FATAL_ERROR "lookup_example built with pkg-config failed: rc=${rc} ${out}")
endif()

# The soname follows the project version: major.minor before 1.0, else the major version.
string(REPLACE "." ";" parts "${VERSION}")
list(GET parts 0 major)
list(GET parts 1 minor)
if(major EQUAL 0)
  set(expected "libautotune_lookup.so.${major}.${minor}")
else()
  set(expected "libautotune_lookup.so.${major}")
endif()
execute_process(COMMAND objdump -p ${libdir}/libautotune_lookup.so OUTPUT_VARIABLE dyn COMMAND_ERROR_IS_FATAL ANY)
if(NOT dyn MATCHES "SONAME +${expected}\n")
  message(FATAL_ERROR "the soname is not ${expected}:\n${dyn}")
endif()
