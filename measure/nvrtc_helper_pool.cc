#include "measure/nvrtc_helper_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "measure/nvrtc_compiler.h"

namespace autotune::measure {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kHelperMagic[4] = {'A', 'T', 'N', 'V'};
constexpr uint32_t kMaxOptions = 4096;
constexpr uint64_t kMaxSourceBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxAnswerBytes = uint64_t{1} << 32;
// A helper that closed its output but keeps running gets this long before it is killed.
constexpr double kHelperExitGraceS = 2;

void AppendU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
void AppendU32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }

uint64_t Micros(double seconds) { return static_cast<uint64_t>(std::llround(std::max(0.0, seconds) * 1e6)); }

enum class Got { kAll, kClosed, kTimeout };

// Reads exactly n bytes into `out` (appended) before the deadline.
Got ReadExactly(int fd, size_t n, Clock::time_point deadline, std::string* out) {
  char buf[1 << 16];
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Got::kTimeout;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready <= 0) continue;  // a slice of the wait, or EINTR: check the deadline again
    const ssize_t got = read(fd, buf, std::min(sizeof buf, n));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Got::kClosed;
    out->append(buf, static_cast<size_t>(got));
    n -= static_cast<size_t>(got);
  }
  return Got::kAll;
}

// What is waiting in a non-blocking descriptor, at most 64 KiB.
std::string Drain(int fd) {
  std::string s;
  char buf[4096];
  while (s.size() < 64 * 1024) {
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    s.append(buf, static_cast<size_t>(got));
  }
  return s;
}

}  // namespace

std::string EncodeHelperRequest(const HelperRequest& r) {
  std::string s(kHelperMagic, sizeof kHelperMagic);
  AppendU64(s, Micros(r.cpu_limit_s));
  AppendU32(s, static_cast<uint32_t>(r.options.size()));
  for (const auto& o : r.options) {
    AppendU32(s, static_cast<uint32_t>(o.size()));
    s += o;
  }
  AppendU64(s, r.source.size());
  s += r.source;
  return s;
}

bool ReadHelperRequest(int fd, HelperRequest* r) {
  char magic[sizeof kHelperMagic];
  if (!ReadFully(fd, magic, sizeof magic) || std::memcmp(magic, kHelperMagic, sizeof kHelperMagic) != 0) return false;
  uint64_t limit_us = 0;
  uint32_t count = 0;
  if (!ReadFully(fd, &limit_us, sizeof limit_us) || !ReadFully(fd, &count, sizeof count) || count > kMaxOptions) {
    return false;
  }
  r->cpu_limit_s = static_cast<double>(limit_us) * 1e-6;
  r->options.assign(count, {});
  for (auto& o : r->options) {
    uint32_t n = 0;
    if (!ReadFully(fd, &n, sizeof n) || n > kMaxSourceBytes) return false;
    o.resize(n);
    if (n > 0 && !ReadFully(fd, o.data(), n)) return false;
  }
  uint64_t n = 0;
  if (!ReadFully(fd, &n, sizeof n) || n > kMaxSourceBytes) return false;
  r->source.resize(n);
  return n == 0 || ReadFully(fd, r->source.data(), n);
}

std::string EncodeHelperAnswer(double cpu_seconds, const std::string& output_bytes) {
  std::string s;
  AppendU64(s, Micros(cpu_seconds));
  AppendU64(s, output_bytes.size());
  s += output_bytes;
  return s;
}

NvrtcHelperPool::NvrtcHelperPool(std::string helper, int nice) : helper_(std::move(helper)), nice_(nice) {}

NvrtcHelperPool::~NvrtcHelperPool() {
  std::lock_guard lock(mu_);
  for (Helper& h : idle_) {
    ProcessResult ignored;
    EndAndReap(&h, false, &ignored);
  }
  idle_.clear();
}

int NvrtcHelperPool::Started() const {
  std::lock_guard lock(mu_);
  return started_;
}

bool NvrtcHelperPool::Start(Helper* h, std::string* why) {
  // CLOEXEC: the other children this process starts (compilers, runners) must not hold our ends,
  // or a helper would not see end-of-file when we close ours.
  int sv[2], err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  // A process group of its own: the terminal's Ctrl-C stops the job (which stores its batch), not
  // the compiles of that batch.
  pid_t pid = -1;
  const int spawned = SpawnInOwnGroup({helper_, "--serve", std::to_string(nice_)}, &actions, false, &pid);
  posix_spawn_file_actions_destroy(&actions);
  close(sv[1]);
  close(err[1]);
  if (spawned != 0) {
    close(sv[0]);
    close(err[0]);
    *why = "cannot start " + helper_ + ": " + std::strerror(spawned);
    return false;
  }
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  *h = Helper{pid, sv[0], err[0], 0};
  std::lock_guard lock(mu_);
  ++started_;
  return true;
}

void NvrtcHelperPool::Close(Helper* h) {
  if (h->channel >= 0) close(h->channel);
  if (h->errors >= 0) close(h->errors);
  h->channel = h->errors = -1;
}

void NvrtcHelperPool::EndAndReap(Helper* h, bool kill_it, ProcessResult* p) {
  // End-of-file on its input: a helper between compiles exits (killed if it has not within the grace).
  if (h->channel >= 0) close(h->channel);
  h->channel = -1;
  p->timed_out = kill_it;
  ReapBy(h->pid, h->pid, DeadlineAfter(Clock::now(), kHelperExitGraceS), p);
  h->pid = -1;
  if (h->errors >= 0) p->output = Drain(h->errors);  // all it wrote: it has ended
  Close(h);
}

HelperCompile NvrtcHelperPool::Compile(const HelperRequest& request, double wall_limit_s) {
  HelperCompile out;
  ProcessResult& p = out.process;
  const auto t0 = Clock::now();
  const auto deadline = DeadlineAfter(t0, wall_limit_s);
  const std::string bytes = EncodeHelperRequest(request);
  Helper h;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      h = idle_.back();
      idle_.pop_back();
    }
  }
  // An idle helper that ended meanwhile (killed from outside) is replaced, not blamed on this source.
  if (h.pid > 0 && waitpid(h.pid, nullptr, WNOHANG) != 0) {
    Close(&h);
    h.pid = -1;
  }
  std::string why;
  if (h.pid < 0 && !Start(&h, &why)) {
    p.output = why;
    return out;
  }
  p.started = true;
  std::string answer;
  Got got = SendFully(h.channel, bytes.data(), bytes.size()) ? ReadExactly(h.channel, 16, deadline, &answer) : Got::kClosed;
  uint64_t cpu_us = 0, size = 0;
  if (got == Got::kAll) {
    std::memcpy(&cpu_us, answer.data(), sizeof cpu_us);
    std::memcpy(&size, answer.data() + sizeof cpu_us, sizeof size);
    answer.clear();
    got = size > kMaxAnswerBytes ? Got::kClosed : ReadExactly(h.channel, static_cast<size_t>(size), deadline, &answer);
  }
  if (got != Got::kAll) {
    EndAndReap(&h, got == Got::kTimeout, &p);
    p.cpu_seconds = std::max(0.0, p.cpu_seconds - h.cpu_answered);  // this compile's share
    p.timed_out = got == Got::kTimeout;
    if (p.timed_out) p.term_signal = 0;  // our SIGKILL
    p.seconds = SecondsSince(t0);
    return out;
  }
  p.exit_code = 0;
  p.cpu_seconds = static_cast<double>(cpu_us) * 1e-6;
  h.cpu_answered += p.cpu_seconds;
  p.seconds = SecondsSince(t0);
  out.answer = std::move(answer);
  if (++h.compiles >= kCompilesPerHelper) {
    ProcessResult retired;
    EndAndReap(&h, false, &retired);
  } else {
    std::lock_guard lock(mu_);
    idle_.push_back(h);
  }
  return out;
}

NvrtcHelperPool& HelperPoolFor(const std::string& helper) {
  static std::mutex mu;
  // Never destroyed: build threads may still compile while the process exits; the helpers see
  // end-of-file on their input when it does, and exit.
  static auto* pools = new std::map<std::string, std::unique_ptr<NvrtcHelperPool>>();
  std::lock_guard lock(mu);
  auto& pool = (*pools)[helper];
  if (!pool) pool = std::make_unique<NvrtcHelperPool>(helper, kCompileNice);
  return *pool;
}

}  // namespace autotune::measure
