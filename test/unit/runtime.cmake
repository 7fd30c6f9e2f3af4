# The runtime's unit tests (.npy and PNG input, slice streams, runMain, the CPU wavefront driver) and
# runtime_demo_exe, the hand-written program the lit tests in test/run/runtime run.
polyc_add_unittest(RuntimeNpyTests SOURCES NpyTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimePngTests SOURCES PngTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeSlicesTests SOURCES SlicesTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeTimerTests SOURCES RuntimeTimerTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeRunMainTests SOURCES RuntimeRunMainTests.cpp LIBS polyc_runtime)
polyc_add_unittest(RuntimeStreamTests SOURCES StreamTests.cpp LIBS polyc_runtime)
polyc_add_unittest(WavefrontTests SOURCES WavefrontTests.cpp LIBS polyc_runtime)
# The same tests without OpenMP, so the std::thread path of Wavefront.h is tested too.
polyc_add_unittest(WavefrontStdThreadTests SOURCES WavefrontTests.cpp LIBS polyc_runtime)
target_compile_definitions(WavefrontStdThreadTests PRIVATE POLYC_WAVEFRONT_STD_THREAD)

add_executable(runtime_demo_exe ${PROJECT_SOURCE_DIR}/test/run/runtime/Inputs/RuntimeDemo.cpp)
target_link_libraries(runtime_demo_exe PRIVATE polyc_runtime)

# And once more under ThreadSanitizer (std::thread path; TSan does not see libgomp's synchronisation):
# it reports a data race on the filter's y array if the driver's acquire/release ordering is
# weakened, which x86's strong memory order would otherwise hide. Only where a TSan binary runs
# (some kernels' address-space layouts make TSan abort at start).
include(CheckCXXSourceRuns)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_cxx_source_runs("#include <thread>\nint main() { int v = 0; std::thread t([&] { v = 1; }); t.join(); return v - 1; }"
                      POLYC_TSAN_RUNS)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(POLYC_TSAN_RUNS)
  polyc_add_unittest(WavefrontTsanTests SOURCES WavefrontTests.cpp LIBS polyc_runtime)
  target_compile_definitions(WavefrontTsanTests PRIVATE POLYC_WAVEFRONT_STD_THREAD)
  target_compile_options(WavefrontTsanTests PRIVATE -fsanitize=thread)
  target_link_options(WavefrontTsanTests PRIVATE -fsanitize=thread)
endif()
