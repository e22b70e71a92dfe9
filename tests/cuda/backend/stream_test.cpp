// Tests for CUDAStream, CUDAEvent, the current device and stream, and the seed's
// asynchrony on the simulated GPU. Asynchrony is asserted deterministically: the
// simulator holds a stream (nothing on it starts) until the test releases it.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "cuda/sim/sim_runtime.h"

namespace {

using glass::cuda::testing::error_of;

using glass::Tensor;
namespace cuda = glass::cuda;

class CudaStreams : public ::testing::Test {
 protected:
  void SetUp() override { cuda::use_simulator(); }
  cuda::sim::SimRuntime& sim() { return cuda::sim::simulator(); }
};

TEST_F(CudaStreams, CurrentDefaultAndPoolStreams) {
  cuda::CUDAStream def = cuda::getDefaultCUDAStream();
  EXPECT_EQ(def.id(), 0);
  EXPECT_EQ(def.device_index(), 0);
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def);
  cuda::CUDAStream s1 = cuda::getStreamFromPool();
  cuda::CUDAStream s2 = cuda::getStreamFromPool();
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1, def);
  {
    cuda::CUDAStreamGuard guard(s1);
    EXPECT_EQ(cuda::getCurrentCUDAStream(), s1);
    EXPECT_EQ(guard.original_stream(), def);
  }
  EXPECT_EQ(cuda::getCurrentCUDAStream(), def);
  cuda::CUDAStream other = cuda::getStreamFromPool(false, 1);
  EXPECT_EQ(other.device_index(), 1);
  {
    cuda::CUDAStreamGuard guard(other);  // also makes cuda:1 current
    EXPECT_EQ(cuda::current_device(), 1);
  }
  EXPECT_EQ(cuda::current_device(), 0);
}

TEST_F(CudaStreams, CurrentStreamIsPerThread) {
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::setCurrentCUDAStream(s);
  cuda::CUDAStream seen_there = cuda::getDefaultCUDAStream();
  std::thread([&] { seen_there = cuda::getCurrentCUDAStream(); }).join();
  EXPECT_EQ(seen_there, cuda::getDefaultCUDAStream());
  EXPECT_EQ(cuda::getCurrentCUDAStream(), s);
  cuda::setCurrentCUDAStream(cuda::getDefaultCUDAStream());
}

// Seed §V: "the CPU enqueues the kernel into a Stream and immediately returns".
TEST_F(CudaStreams, OpsReturnBeforeTheirKernelsRun) {
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  Tensor x = glass::ones({1000}).cuda();  // synchronized copy: x is on the device
  sim().hold(s);
  Tensor y = x * 3 + 1;  // two kernels queued; nothing ran
  EXPECT_FALSE(s.query());
  EXPECT_EQ(sim().pending_ops(s), 2u);
  sim().release(s);
  s.synchronize();
  EXPECT_TRUE(s.query());
  EXPECT_TRUE(glass::equal(y.cpu(), glass::full({1000}, 4.0)));
}

// Seed §V: synchronization happens when you copy to the CPU (.item(), printing).
TEST_F(CudaStreams, ItemWaitsForTheStreamThatProducedTheData) {
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  Tensor x = glass::ones({4}).cuda();
  sim().hold(s);
  Tensor y = x + 1;
  std::atomic<bool> done{false};
  float value = 0;
  std::thread reader([&] {
    cuda::CUDAStreamGuard g(s);  // the reader uses the same stream
    value = y.select(0, 0).item<float>();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done.load());  // item() is waiting: the kernel cannot have run
  sim().release(s);
  reader.join();
  EXPECT_TRUE(done.load());
  EXPECT_FLOAT_EQ(value, 2.0f);
}

TEST_F(CudaStreams, EventsOrderTwoStreams) {
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  Tensor x = glass::zeros({256}).cuda();
  Tensor y;
  sim().hold(producer);
  {
    cuda::CUDAStreamGuard g(producer);
    x.add_(5);
  }
  cuda::CUDAEvent ready;
  ready.record(producer);
  ready.block(consumer);
  EXPECT_FALSE(ready.query());
  {
    cuda::CUDAStreamGuard g(consumer);
    y = x * 2;  // waits for the producer's add_ through the event
  }
  EXPECT_FALSE(consumer.query());  // the event is not complete
  sim().release(producer);
  consumer.synchronize();
  EXPECT_TRUE(ready.query());
  cuda::CUDAStreamGuard g(consumer);
  EXPECT_TRUE(glass::equal(y.cpu(), glass::full({256}, 10.0)));
}

TEST_F(CudaStreams, ElapsedTimeNeedsTimingEvents) {
  cuda::CUDAStream s = cuda::getCurrentCUDAStream();
  cuda::CUDAEvent start(cuda::kEventDefault), end(cuda::kEventDefault);
  Tensor x = glass::ones({1 << 16}).cuda();
  start.record(s);
  for (int i = 0; i < 4; ++i) x.mul_(1.0001);
  end.record(s);
  end.synchronize();
  EXPECT_GE(start.elapsed_time(end), 0.0f);
  cuda::CUDAEvent plain;
  plain.record(s);
  plain.synchronize();
  std::string msg = error_of([&] { (void)plain.elapsed_time(end); });
  EXPECT_NE(msg.find("timing"), std::string::npos) << msg;
}

TEST_F(CudaStreams, EventOfOneDeviceOnAnotherIsAnError) {
  cuda::CUDAEvent e;
  e.record(cuda::getDefaultCUDAStream(0));
  std::string msg = error_of([&] { e.record(cuda::getDefaultCUDAStream(1)); });
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda:1"), std::string::npos) << msg;
  msg = error_of([&] { e.block(cuda::getDefaultCUDAStream(1)); });
  EXPECT_NE(msg.find("cuda:1"), std::string::npos) << msg;
}

TEST_F(CudaStreams, SynchronizeWaitsForEveryStreamOfTheDevice) {
  cuda::CUDAStream a = cuda::getStreamFromPool(), b = cuda::getStreamFromPool();
  Tensor x = glass::ones({64}).cuda(), y = glass::ones({64}).cuda();
  {
    cuda::CUDAStreamGuard g(a);
    x.mul_(2);
  }
  {
    cuda::CUDAStreamGuard g(b);
    y.mul_(3);
  }
  cuda::synchronize();
  EXPECT_TRUE(a.query());
  EXPECT_TRUE(b.query());
}

TEST_F(CudaStreams, BadDeviceIndexNamesTheCount) {
  std::string msg = error_of([] { cuda::set_device(7); });
  EXPECT_NE(msg.find("cuda:7 does not exist"), std::string::npos) << msg;
  EXPECT_EQ(cuda::current_device(), 0);
}

TEST_F(CudaStreams, DeviceNameSaysSimulated) {
  EXPECT_TRUE(cuda::is_simulated());
  EXPECT_TRUE(cuda::is_available());
  EXPECT_EQ(cuda::device_count(), 2);
  EXPECT_NE(cuda::runtime().properties(0).name.find("simulated"), std::string::npos);
}

}  // namespace
