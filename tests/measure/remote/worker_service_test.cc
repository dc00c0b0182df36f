// The worker's Measurement service in-process on loopback, cpu target (C builder, CPU runner), called
// through a real gRPC stub the way a tuning job calls it: correct kernels, crashing and uncompilable
// candidates, the token, malformed and oversized requests, back-pressure, cancellation and the health
// service. After every refusal the worker must still answer. Timings are never asserted.
#include <autotune/proto/measurement.grpc.pb.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <thread>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/remote/wire.h"
#include "measure/remote/worker_service.h"
#include "search/default_schedule.h"
#include "tir/codegen/codegen_c.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tests/temp_path.h"

namespace autotune::measure::remote {
namespace {

constexpr char kGemmShape[] = "M=32,N=24,K=16";

// ---- a worker on 127.0.0.1:0 ----

struct TestWorker {
  std::unique_ptr<WorkerService> service;
  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<rpc::Measurement::Stub> stub;
  std::mutex log_mu;
  std::vector<std::string> log;

  ~TestWorker() {
    if (server) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu);
    return log;
  }
};

std::string CacheDir() {
  static const std::string dir = [] {
    std::string d = autotune::testing::TestTempPath("worker_service_test", "cache");
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    return d;
  }();
  return dir;
}

MeasureConfig SmallConfig() {
  MeasureConfig c;
  c.cache_dir = CacheDir();
  c.repeats = 1;
  c.min_repeat_ms = 1;
  c.warmup = 0;
  c.flush_bytes = 1 << 20;
  c.build_threads = 2;
  c.num_threads = 1;
  c.run_timeout_s = 10;
  return c;
}

std::unique_ptr<TestWorker> StartWorker(const std::string& token = "", int queue = 4) {
  auto w = std::make_unique<TestWorker>();
  WorkerOptions o;
  o.target_kind = "cpu";
  o.config = SmallConfig();
  o.info.set_arch("x86_64");
  o.info.set_device("test cpu");
  o.info.set_worker_version("test");
  o.token = token;
  o.queue_capacity = queue;
  o.make_builder = [](const MeasureConfig& c) { return MakeCBuilder(c); };
  o.make_runner = [](const MeasureConfig& c) { return MakeCpuRunner(c); };
  TestWorker* raw = w.get();
  o.log = [raw](const std::string& line) {
    std::lock_guard<std::mutex> lock(raw->log_mu);
    raw->log.push_back(line);
  };
  w->service = std::make_unique<WorkerService>(std::move(o));
  auto started = StartWorkerServer("127.0.0.1:0", *w->service);
  EXPECT_TRUE(started) << started.error().message;
  if (!started) return w;
  EXPECT_GT(started->port, 0);
  w->server = std::move(started->server);
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);  // let the test send oversized requests: the worker must refuse them
  w->channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(started->port),
                                         grpc::InsecureChannelCredentials(), args);
  w->stub = rpc::Measurement::NewStub(w->channel);
  return w;
}

// ---- requests the way the job makes them ----

rpc::Candidate Generated(const tir::Schedule& sch, const tir::Workload& w) {
  tir::LowerOptions lo;
  lo.name = "kernel_gemm";
  auto f = tir::Lower(sch.state(), lo);
  EXPECT_TRUE(f) << f.error().message;
  const BuildResult generated = GenerateC(BuildInput::FromFunc(*f));
  EXPECT_TRUE(generated.ok()) << generated.error_message;
  EXPECT_EQ(generated.num_params, static_cast<int>(w.inputs.size()) + 1);
  rpc::Candidate c;
  ToWire(generated, &c);
  return c;
}

rpc::Candidate Source(const std::string& body) {
  rpc::Candidate c;
  c.set_source("#include <signal.h>\n#include <unistd.h>\nvoid k(float* A, float* B, float* C) {\n" + body + "\n}\n");
  c.set_entry("k");
  c.set_num_params(3);
  return c;
}

rpc::MeasureRequest Request(std::vector<rpc::Candidate> candidates) {
  rpc::MeasureRequest r;
  r.set_target_kind("cpu");
  r.mutable_workload()->set_op("gemm");
  r.mutable_workload()->set_shape(kGemmShape);
  r.mutable_settings()->set_repeats(1);
  for (auto& c : candidates) *r.add_candidates() = std::move(c);
  return r;
}

struct Reply {
  grpc::Status status;
  std::vector<rpc::CandidateResult> results;
};

Reply Call(TestWorker& w, const rpc::MeasureRequest& request, const std::string& token = "",
           double deadline_s = 60) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(deadline_s * 1000)));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  Reply reply;
  auto reader = w.stub->Measure(&ctx, request);
  rpc::CandidateResult r;
  while (reader->Read(&r)) reply.results.push_back(r);
  reply.status = reader->Finish();
  return reply;
}

grpc::Status Describe(TestWorker& w, rpc::WorkerInfo* info, const std::string& token = "") {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  return w.stub->Describe(&ctx, rpc::DescribeRequest(), info);
}

void ExpectStillServing(TestWorker& w) {
  rpc::WorkerInfo info;
  grpc::Status s = Describe(w, &info);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

const rpc::CandidateResult* ByIndex(const Reply& r, int index) {
  for (const auto& c : r.results) {
    if (c.index() == index) return &c;
  }
  return nullptr;
}

// ---- the tests ----

class WorkerServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { worker_ = StartWorker().release(); }
  static void TearDownTestSuite() {
    delete worker_;
    worker_ = nullptr;
    std::filesystem::remove_all(CacheDir());
  }
  void SetUp() override { ASSERT_TRUE(worker_ && worker_->stub); }
  static TestWorker* worker_;
};
TestWorker* WorkerServiceTest::worker_ = nullptr;

TEST_F(WorkerServiceTest, DescribeSaysWhatItMeasures) {
  rpc::WorkerInfo info;
  grpc::Status s = Describe(*worker_, &info);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(info.target_kind(), "cpu");
  EXPECT_EQ(info.arch(), "x86_64");
  EXPECT_EQ(info.queue_capacity(), 4);
  EXPECT_EQ(info.queued(), 0);
}

TEST_F(WorkerServiceTest, GeneratedCandidatesAreMeasuredCorrectly) {
  auto w = tir::MakeWorkload("gemm", kGemmShape);
  ASSERT_TRUE(w) << w.error().message;
  std::vector<rpc::Candidate> candidates;
  auto def = search::DefaultSchedule(*w, tir::TargetKind::kCpu);
  ASSERT_TRUE(def) << def.error().message;
  candidates.push_back(Generated(*def, *w));
  for (uint64_t seed : {1, 2}) {
    auto sch = search::RandomSchedule(*w, tir::TargetKind::kCpu, seed);
    ASSERT_TRUE(sch) << sch.error().message;
    candidates.push_back(Generated(*sch, *w));
  }
  tir::Schedule packed(*w, tir::TargetKind::kCpu);  // B packed: its pack step travels with it
  ASSERT_TRUE(packed.PackInput("B", 1, {int64_t{8}}));
  candidates.push_back(Generated(packed, *w));
  ASSERT_EQ(candidates.back().packs_size(), 1);
  const Reply reply = Call(*worker_, Request(candidates));
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_EQ(reply.results.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const rpc::CandidateResult* r = ByIndex(reply, i);
    ASSERT_NE(r, nullptr) << "no result for candidate " << i;
    EXPECT_EQ(r->error_kind(), "NONE") << r->error_message();
    EXPECT_TRUE(r->correct());
    EXPECT_EQ(r->latencies_ms_size(), 1);
    // What the job does with it.
    const MeasureResult m = FromWire(*r);
    EXPECT_TRUE(m.ok()) << m.error_message;
    EXPECT_GT(m.median_ms, 0);
  }
  const auto log = worker_->Log();
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("candidates=4 valid=4 failed=0"), std::string::npos) << log.back();
  const auto counters = worker_->service->counters().Snapshot();
  EXPECT_GE(counters.candidates_run, 4);
  EXPECT_EQ(counters.queued, 0);
}

// A request's element type reaches the worker: float16 kernels get float16 data and checks.
TEST_F(WorkerServiceTest, SixteenBitWorkloadsAreMeasuredInTheirType) {
  auto w = tir::MakeWorkload("gemm", kGemmShape, "", "float16");
  ASSERT_TRUE(w) << w.error().message;
  auto def = search::DefaultSchedule(*w, tir::TargetKind::kCpu);
  ASSERT_TRUE(def) << def.error().message;
  rpc::MeasureRequest request = Request({Generated(*def, *w)});
  request.mutable_workload()->set_dtype("float16");
  const Reply reply = Call(*worker_, request);
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_NE(ByIndex(reply, 0), nullptr);
  EXPECT_EQ(ByIndex(reply, 0)->error_kind(), "NONE") << ByIndex(reply, 0)->error_message();
  EXPECT_TRUE(ByIndex(reply, 0)->correct());
  request.mutable_workload()->set_dtype("float8");
  const Reply bad = Call(*worker_, request);
  EXPECT_EQ(bad.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.status.error_message().find("unknown element type 'float8'"), std::string::npos)
      << bad.status.error_message();
}

TEST_F(WorkerServiceTest, CrashingKernelIsARunErrorAndTheWorkerGoesOn) {
  const Reply crash = Call(*worker_, Request({Source("*(volatile float*)0 = 1.0f; C[0] = A[0] + B[0];"),
                                              Source("raise(SIGSEGV);")}));
  ASSERT_TRUE(crash.status.ok()) << crash.status.error_message();
  ASSERT_EQ(crash.results.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(ByIndex(crash, i), nullptr);
    EXPECT_EQ(ByIndex(crash, i)->error_kind(), "RUN_ERROR") << ByIndex(crash, i)->error_message();
  }
  // The next request is measured as usual.
  auto w = tir::MakeWorkload("gemm", kGemmShape);
  auto def = search::DefaultSchedule(*w, tir::TargetKind::kCpu);
  ASSERT_TRUE(def);
  const Reply next = Call(*worker_, Request({Generated(*def, *w)}));
  ASSERT_TRUE(next.status.ok()) << next.status.error_message();
  ASSERT_EQ(next.results.size(), 1u);
  EXPECT_EQ(next.results[0].error_kind(), "NONE") << next.results[0].error_message();
}

TEST_F(WorkerServiceTest, SourceThatDoesNotCompileIsABuildError) {
  auto w = tir::MakeWorkload("gemm", kGemmShape);
  auto def = search::DefaultSchedule(*w, tir::TargetKind::kCpu);
  ASSERT_TRUE(def);
  const Reply reply = Call(*worker_, Request({Source("this is not C;"), Generated(*def, *w)}));
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_EQ(reply.results.size(), 2u);
  ASSERT_NE(ByIndex(reply, 0), nullptr);
  ASSERT_NE(ByIndex(reply, 1), nullptr);
  EXPECT_EQ(ByIndex(reply, 0)->error_kind(), "BUILD_ERROR");
  EXPECT_FALSE(ByIndex(reply, 0)->error_message().empty());
  EXPECT_EQ(ByIndex(reply, 1)->error_kind(), "NONE") << ByIndex(reply, 1)->error_message();
  // A failed build is answered before the batch runs.
  EXPECT_EQ(reply.results[0].index(), 0);
}

struct Refusal {
  std::string name;
  rpc::MeasureRequest request;
  grpc::StatusCode code;
};

TEST_F(WorkerServiceTest, MalformedRequestsAreRefusedAndTheWorkerKeepsServing) {
  std::vector<Refusal> cases;
  const rpc::Candidate ok = Source("C[0] = 0;");
  {
    auto r = Request({ok});
    r.clear_workload();
    cases.push_back({"no workload", r, grpc::StatusCode::INVALID_ARGUMENT});
  }
  {
    auto r = Request({ok});
    r.mutable_workload()->set_op("no_such_op");
    cases.push_back({"unknown op", r, grpc::StatusCode::INVALID_ARGUMENT});
  }
  {
    auto r = Request({ok});
    r.mutable_workload()->set_shape("M=-3,N=2");
    cases.push_back({"bad shape", r, grpc::StatusCode::INVALID_ARGUMENT});
  }
  cases.push_back({"zero candidates", Request({}), grpc::StatusCode::INVALID_ARGUMENT});
  {
    auto r = Request({});
    for (int i = 0; i <= kMaxCandidates; ++i) *r.add_candidates() = ok;
    cases.push_back({"too many candidates", r, grpc::StatusCode::RESOURCE_EXHAUSTED});
  }
  {
    rpc::Candidate big = ok;
    big.set_source(std::string(kMaxSourceBytes + 1, ' '));
    cases.push_back({"source over the limit", Request({big}), grpc::StatusCode::INVALID_ARGUMENT});
  }
  {
    rpc::Candidate no_entry = ok;
    no_entry.clear_entry();
    cases.push_back({"candidate without entry", Request({ok, no_entry}), grpc::StatusCode::INVALID_ARGUMENT});
  }
  {
    auto r = Request({ok});
    r.mutable_settings()->set_repeats(-1);
    cases.push_back({"bad settings", r, grpc::StatusCode::INVALID_ARGUMENT});
  }
  for (const auto& [param, elements] : {std::pair<int, int64_t>{2, 64}, {-1, 64}, {1, 0}, {1, kMaxPackedElements + 1}}) {
    rpc::Candidate bad = ok;
    rpc::PackStep* step = bad.add_packs();
    step->set_param(param);  // 2 is the output
    step->set_entry("k");
    step->set_packed_elements(elements);
    cases.push_back({"bad pack step", Request({bad}), grpc::StatusCode::INVALID_ARGUMENT});
  }
  for (double ratio : {-1.0, std::nan(""), 1e9}) {
    auto r = Request({ok});
    r.mutable_settings()->set_screen_ratio(ratio);
    cases.push_back({"bad screen ratio", r, grpc::StatusCode::INVALID_ARGUMENT});
  }
  {
    auto r = Request({ok});
    r.set_target_kind("cuda");
    cases.push_back({"wrong target", r, grpc::StatusCode::FAILED_PRECONDITION});
  }
  {
    auto r = Request({ok});
    r.set_arch("aarch64");
    cases.push_back({"wrong arch", r, grpc::StatusCode::FAILED_PRECONDITION});
  }
  {
    rpc::Candidate huge = ok;
    huge.set_source(std::string(kMaxMessageBytes + (size_t{1} << 20), ' '));
    cases.push_back({"message over 64 MiB", Request({huge}), grpc::StatusCode::RESOURCE_EXHAUSTED});
  }
  const int64_t batches_before = worker_->service->counters().Snapshot().batches;
  for (const Refusal& c : cases) {
    const Reply reply = Call(*worker_, c.request);
    EXPECT_EQ(reply.status.error_code(), c.code) << c.name << ": " << reply.status.error_message();
    EXPECT_TRUE(reply.results.empty()) << c.name;
    EXPECT_EQ(reply.status.error_message().find('\n'), std::string::npos) << c.name;
    ExpectStillServing(*worker_);
  }
  // Nothing of a refused request was accepted.
  EXPECT_EQ(worker_->service->counters().Snapshot().batches, batches_before);
}

TEST(WorkerServiceToken, CallsWithoutTheTokenAreUnauthenticated) {
  auto worker = StartWorker("s3cret-token");
  ASSERT_TRUE(worker->stub);
  rpc::WorkerInfo info;
  EXPECT_EQ(Describe(*worker, &info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Describe(*worker, &info, "wrong").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Describe(*worker, &info, "s3cret-token-and-more").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Describe(*worker, &info, "s3cret-token").ok());

  const auto request = Request({Source("for (int i = 0; i < 32 * 24; ++i) C[i] = 0;")});
  EXPECT_EQ(Call(*worker, request).status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call(*worker, request, "wrong").status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const Reply ok = Call(*worker, request, "s3cret-token");
  EXPECT_TRUE(ok.status.ok()) << ok.status.error_message();
  ASSERT_EQ(ok.results.size(), 1u);
  // It ran (and computed the wrong answer): the token let it through.
  EXPECT_EQ(ok.results[0].error_kind(), "WRONG_ANSWER") << ok.results[0].error_message();
}

TEST(WorkerServiceQueue, AFullQueueRefusesAndACancelledCallStopsEarly) {
  auto worker = StartWorker("", /*queue=*/1);
  ASSERT_TRUE(worker->stub);
  // Ten candidates that each take at least 0.3 s: the client gives up after about one of them.
  std::vector<rpc::Candidate> slow;
  for (int i = 0; i < 10; ++i) slow.push_back(Source("usleep(300000); /* " + std::to_string(i) + " */"));
  std::thread busy([&] {
    const Reply r = Call(*worker, Request(slow), "", /*deadline_s=*/2.5);
    EXPECT_EQ(r.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << r.status.error_message();
    EXPECT_LT(r.results.size(), 10u);
  });
  // Wait until the slow batch holds the only slot.
  rpc::WorkerInfo info;
  for (int i = 0; i < 200 && info.queued() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(Describe(*worker, &info).ok());
  }
  ASSERT_EQ(info.queued(), 1);
  const Reply refused = Call(*worker, Request({Source("C[0] = 0;")}));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.status.error_message().find("busy"), std::string::npos) << refused.status.error_message();
  busy.join();
  // The worker noticed the cancellation and stopped the batch instead of running all ten.
  for (int i = 0; i < 500 && worker->service->counters().Snapshot().queued > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto c = worker->service->counters().Snapshot();
  EXPECT_EQ(c.queued, 0);
  EXPECT_LT(c.candidates_run, 10);
  EXPECT_EQ(c.rejected_busy, 1);
  ExpectStillServing(*worker);
}

TEST_F(WorkerServiceTest, HealthServiceAnswersServing) {
  // grpc.health.v1.Health/Check with an empty HealthCheckRequest (service ""); the answer is a
  // HealthCheckResponse whose field 1 (status) is SERVING (1): bytes 08 01.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  const grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check", grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::Status s = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(worker_->channel.get(), method,
                                                                                         &ctx, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

}  // namespace
}  // namespace autotune::measure::remote
