// GPU tests: doctest's runner, after a device check. Without a device (or driver) the program
// says so and exits 77, which CTest (SKIP_RETURN_CODE) reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "coinfer/runtime/cuda_stream_device.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (coinfer::CudaStreamDevice::device_count(why) == 0) {
    std::printf("no CUDA device: skipped (%s)\n", why.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
