# The runtime's unit tests (.npy I/O, runMain, the CPU wavefront driver) and runtime_demo_exe, the
# hand-written program the lit tests in test/run/runtime run.
polyc_add_unittest(RuntimeNpyTests SOURCES NpyTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeTimerTests SOURCES RuntimeTimerTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeRunMainTests SOURCES RuntimeRunMainTests.cpp LIBS polyc_runtime)
polyc_add_unittest(WavefrontTests SOURCES WavefrontTests.cpp LIBS polyc_runtime)
# The same tests without OpenMP, so the std::thread path of Wavefront.h is tested too.
polyc_add_unittest(WavefrontStdThreadTests SOURCES WavefrontTests.cpp LIBS polyc_runtime)
target_compile_definitions(WavefrontStdThreadTests PRIVATE POLYC_WAVEFRONT_STD_THREAD)

add_executable(runtime_demo_exe ${PROJECT_SOURCE_DIR}/test/run/runtime/Inputs/RuntimeDemo.cpp)
target_link_libraries(runtime_demo_exe PRIVATE polyc_runtime)
