# NpyFuzzer: arbitrary bytes through the runtime's .npy parser. Npy.cpp is compiled into the fuzzer
# itself (not linked from polyc_runtime) so that it carries the sanitizer and coverage instrumentation.
polyc_add_fuzzer(NpyFuzzer SOURCES NpyFuzzer.cpp ${PROJECT_SOURCE_DIR}/runtime/src/Npy.cpp)
target_include_directories(NpyFuzzer PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
