// Runs functions one at a time on a thread of its own and waits for each: every XGBoost call of the
// cost model goes through one, so XGBoost's OpenMP thread pool belongs to that thread. libgomp keeps
// its pool per thread that started it, and a process that forks from a thread that never started one
// gives its children a clean OpenMP (the cpu runner forks a child per kernel, and the kernels run
// OpenMP: had the forking thread a pool, the children would wait forever for its missing threads).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace autotune::costmodel {

class DedicatedThread {
 public:
  DedicatedThread();
  ~DedicatedThread();  // finishes what was posted, then joins
  DedicatedThread(const DedicatedThread&) = delete;
  DedicatedThread& operator=(const DedicatedThread&) = delete;

  // Runs f on the thread (inline when called from it) and returns its result; f's exception is
  // rethrown here.
  template <class F>
  auto Run(F&& f) -> decltype(f()) {
    if (std::this_thread::get_id() == thread_.get_id()) return f();
    std::packaged_task<decltype(f())()> task(std::forward<F>(f));
    auto result = task.get_future();
    Post([&task] { task(); });
    return result.get();
  }

 private:
  void Post(std::function<void()> fn);
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace autotune::costmodel
