// lessons/08_cuda_async/exercises/exercises_test.cpp — grades lesson 08's exercises on the
// simulated GPU, with the race checker on. Exercise 1: the pipeline's values, whether its
// events make it race-free (the checker), whether the host waited (the producer stream is
// held while the function runs), and which stream ran which stage (the timeline).
// Exercise 2: the values, and — with a gate kernel holding the stream up — whether the
// host->device copy was pinned, whether the host queued the kernels without waiting for it,
// and whether the function returned before its result could exist. Every verdict comes from
// a hold, a gate or the timeline, never from how long something took; the time limits below
// only bound how long a wrong answer may keep the test waiting. Built against solution.cpp
// or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cuda/sim/gate.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/sim/timeline.h"
#include "exercises.h"

namespace glass::lesson08 {
namespace {

namespace sim = cuda::sim;
using sim::Gate;  // a kernel that waits until the test opens it
using Clock = std::chrono::steady_clock;

sim::SimRuntime& simulator() { return sim::simulator(); }

class Lesson08 : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda::use_simulator();
    was_checking_ = simulator().race_check();
    simulator().set_race_check(true);
  }
  void TearDown() override {
    cuda::synchronize();
    simulator().set_race_check(was_checking_);
  }

 private:
  bool was_checking_ = false;
};

// What became of a call made on a second host thread.
struct Outcome {
  bool returned_in_time = false;  // it returned before the limit
  std::string error;              // the message it threw, or ""
};

// Runs f on a second host thread and waits up to `limit` for it to return; if it has not,
// calls unblock() (which must let it finish) and joins it.
Outcome run_on_second_thread(const std::function<void()>& f, std::chrono::milliseconds limit,
                             const std::function<void()>& unblock) {
  std::atomic<bool> done{false};
  std::string error;
  std::thread host2([&] {
    try {
      f();
    } catch (const std::exception& e) {
      error = e.what();
    }
    done = true;
  });
  const auto deadline = Clock::now() + limit;
  while (!done && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool returned = done;
  if (!returned) unblock();
  host2.join();
  return {returned, error};
}

// ---- exercise 1 ------------------------------------------------------------------------

// A pipeline's tensors on cuda:0: input i holds 100 * i + [0, 1, ..., numel - 1]; outputs
// start at -1. Made on the default stream and finished, as the contract says.
struct PipelineData {
  std::vector<Tensor> inputs, outputs;
  Tensor slot;
  PipelineData(int n, int64_t numel) {
    for (int i = 0; i < n; ++i) {
      inputs.push_back((arange(numel).to(kFloat) + 100.0 * i).to(kCUDA));
      outputs.push_back(full({numel}, -1.0, TensorOptions().device(kCUDA)));
    }
    slot = empty({numel}, TensorOptions().device(kCUDA));
    cuda::synchronize();
  }
  // Call after the device has finished: empty when every output is right.
  std::string wrong_outputs() const {
    std::string wrong;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor want = inputs[i].cpu() * 2 + 1;
      if (!equal(outputs[i].cpu(), want))
        wrong += " outputs[" + std::to_string(i) + "] (want input * 2 + 1)";
    }
    return wrong;
  }
};

TEST_F(Lesson08, Exercise1OutputsAreRightAndRaceFree) {
  for (const int n : {1, 2, 5}) {
    PipelineData d(n, 1000);
    cuda::CUDAStream producer = cuda::getStreamFromPool();
    cuda::CUDAStream consumer = cuda::getStreamFromPool();
    try {
      pipeline(d.inputs, d.slot, d.outputs, producer, consumer);
    } catch (const Error& e) {
      FAIL() << "with " << n << " inputs, your pipeline threw (the race checker reports a "
             << "missing or misplaced event this way):\n"
             << e.what();
    }
    cuda::synchronize();
    EXPECT_EQ(d.wrong_outputs(), "") << "with " << n << " inputs";
  }
}

TEST_F(Lesson08, Exercise1TheHostDoesNotWait) {
  PipelineData d(3, 256);
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  simulator().hold(producer);  // nothing on the producer runs until release
  const Outcome out =
      run_on_second_thread([&] { pipeline(d.inputs, d.slot, d.outputs, producer, consumer); },
                           std::chrono::seconds(5), [&] { simulator().release(producer); });
  if (!out.returned_in_time) {
    FAIL() << "with the producer stream held, your function did not return within 5 s: "
              "it waited for the device (item(), printing and copies to the host wait for the "
              "stream that produced the data). Order the streams with events and return.";
  }
  if (!out.error.empty()) {
    simulator().release(producer);
    if (out.error.find("is held") != std::string::npos) {
      FAIL() << "your function made the host wait for the producer stream (a synchronize of "
                "a stream, an event or the whole device): with the producer held, that wait "
                "could never end. Use event.block(stream) so that the *stream* waits, not the "
                "host. The simulator said:\n"
             << out.error;
    }
    FAIL() << "your function threw:\n" << out.error;
  }
  // The consumer's work must wait for the producer's, which cannot run while it is held.
  const bool consumer_done = consumer.query();
  simulator().release(producer);
  EXPECT_FALSE(consumer_done) << "with the producer held, the consumer stream had nothing left "
                                 "to do: consume() did not run on it, or did not wait for "
                                 "produce()";
  cuda::synchronize();
  EXPECT_EQ(d.wrong_outputs(), "");
}

TEST_F(Lesson08, Exercise1EachStageRunsOnItsStream) {
  const int n = 3;
  PipelineData d(n, 256);
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  simulator().clear_timeline();
  pipeline(d.inputs, d.slot, d.outputs, producer, consumer);
  cuda::synchronize();
  const int64_t p = simulator().stream_id(producer), c = simulator().stream_id(consumer);
  int muls_on_producer = 0, adds_on_consumer = 0, elsewhere = 0;
  for (const sim::TimelineRecord& r : simulator().timeline()) {
    if (r.kind != sim::OpKind::Kernel) continue;
    if (r.stream != p && r.stream != c) ++elsewhere;
    muls_on_producer += r.name == "mul<Float>" && r.stream == p;
    adds_on_consumer += r.name == "add<Float>" && r.stream == c;
  }
  EXPECT_EQ(muls_on_producer, n) << "produce() (its mul_) belongs on the producer stream";
  EXPECT_EQ(adds_on_consumer, n) << "consume() (its add_) belongs on the consumer stream";
  EXPECT_EQ(elsewhere, 0) << "kernels ran on other streams than the two given";
}

// ---- exercise 2 ------------------------------------------------------------------------

TEST_F(Lesson08, Exercise2ValuesAreRight) {
  manual_seed(8);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1000}, std::vector<int64_t>{8, 300}, std::vector<int64_t>{2, 3, 50}}) {
    const Tensor batch = randn(shape);
    const Tensor result = stage_and_compute(batch);
    ASSERT_TRUE(result.defined() && result.is_cpu()) << "return a CPU tensor";
    EXPECT_TRUE(result.sizes() == batch.sizes());
    EXPECT_TRUE(equal(result, compute(batch))) << "relu((batch - 0.5) * 2), computed on cuda:0";
  }
}

TEST_F(Lesson08, Exercise2OnlyTheResultMakesTheHostWait) {
  manual_seed(9);
  const Tensor batch = randn({64, 256});
  const Tensor expected = compute(batch);
  cuda::synchronize();
  simulator().clear_timeline();
  // The second thread's current stream is cuda:0's default stream; the gate goes there.
  Gate gate(cuda::getDefaultCUDAStream(0));
  Tensor result, at_return;
  int64_t gate_opened_ns = 0;
  const Outcome out = run_on_second_thread(
      [&] {
        result = stage_and_compute(batch);
        // What the caller would read the moment you return.
        if (result.defined() && result.is_cpu()) at_return = result.clone();
      },
      std::chrono::seconds(1),
      [&] {
        gate_opened_ns = sim::timeline_now_ns();
        gate.open();
      });
  if (gate_opened_ns == 0) {  // it returned with the gate still closed
    gate_opened_ns = sim::timeline_now_ns();
    gate.open();
  }
  cuda::synchronize();
  ASSERT_EQ(out.error, "") << "your function threw";
  ASSERT_TRUE(result.defined() && result.is_cpu()) << "return a CPU tensor";

  std::vector<sim::TimelineRecord> to_device, kernels;
  for (const sim::TimelineRecord& r : simulator().timeline()) {
    if (r.kind == sim::OpKind::Copy && r.copy_kind == cuda::CopyKind::HostToDevice)
      to_device.push_back(r);
    if (r.kind == sim::OpKind::Kernel && r.name != "gate") kernels.push_back(r);
  }
  ASSERT_FALSE(to_device.empty()) << "no host -> device copy: compute on cuda:0";
  for (const sim::TimelineRecord& r : to_device)
    EXPECT_TRUE(r.pinned) << r.name << " read pageable memory, which the host copies into a "
                          << "staging buffer itself before the copy engine can start; pin the "
                          << "batch first (pin_memory()) so that the copy engine reads it";
  ASSERT_FALSE(kernels.empty()) << "no kernel ran: compute on cuda:0";
  EXPECT_LT(kernels.front().enqueue_ns, gate_opened_ns)
      << "the host waited for the host -> device copy before queueing " << kernels.front().name
      << ": with non_blocking=false, to(kCUDA) synchronizes the stream";
  EXPECT_FALSE(out.returned_in_time)
      << "your function returned while a kernel held the stream up, so its result cannot "
         "have been computed yet: a non_blocking copy into pinned memory has only been "
         "queued when it returns; synchronize before reading it, or copy into pageable "
         "memory, which waits";
  EXPECT_TRUE(at_return.defined() && equal(at_return, expected))
      << "the values when your function returned are not relu((batch - 0.5) * 2)";
}

}  // namespace
}  // namespace glass::lesson08
