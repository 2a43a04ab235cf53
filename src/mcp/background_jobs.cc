#include "mcp/background_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>
#include <utility>

namespace cordon::mcp {
namespace {

// How often a waiting Read looks at its cancel token (the token has no condition variable).
constexpr std::chrono::milliseconds kCancelPoll{50};
// Stop waits this long for a killed command's run to return; the supervisor reaps a killed
// tree at once, so this is only reached when something is badly wrong.
constexpr std::chrono::seconds kStopWait{30};

// Drops the oldest bytes of `unread` beyond kMaxUnreadBytes; how many.
std::size_t TrimToCap(std::string& unread) {
  if (unread.size() <= BackgroundJobs::kMaxUnreadBytes) return 0;
  const std::size_t excess = unread.size() - BackgroundJobs::kMaxUnreadBytes;
  unread.erase(0, excess);
  return excess;
}

std::string Abbreviated(std::string_view command) {
  constexpr std::size_t kMax = 60;
  if (command.size() <= kMax) return std::string(command);
  return fmt::format("{}...", command.substr(0, kMax));
}

}  // namespace

BackgroundJobs::BackgroundJobs(CommandRunner& runner, std::shared_mutex* worktree_lock)
    : runner_(runner), worktree_lock_(worktree_lock) {}

BackgroundJobs::~BackgroundJobs() { StopAll(); }

std::shared_ptr<BackgroundJobs::Job> BackgroundJobs::Find(std::string_view id) const {
  for (const std::shared_ptr<Job>& job : jobs_) {
    if (job->id == id) return job;
  }
  return nullptr;
}

std::size_t BackgroundJobs::RunningLocked() const {
  return static_cast<std::size_t>(
      std::count_if(jobs_.begin(), jobs_.end(), [](const auto& job) { return !job->ended; }));
}

std::size_t BackgroundJobs::running() const {
  std::lock_guard lock(mutex_);
  return RunningLocked();
}

std::string BackgroundJobs::RunningListLocked() const {
  std::string list;
  for (const std::shared_ptr<Job>& job : jobs_) {
    if (job->ended) continue;
    if (!list.empty()) list += ", ";
    list += fmt::format("{} ({})", job->id, Abbreviated(job->command));
  }
  return list;
}

std::string BackgroundJobs::RunningList() const {
  std::lock_guard lock(mutex_);
  return RunningListLocked();
}

BackgroundJobs::Report BackgroundJobs::TakeReport(Job& job) {
  Report report;
  report.id = job.id;
  report.command = job.command;
  report.running = !job.ended;
  report.stopped = job.stopped;
  if (job.ended) report.result = job.result;
  for (std::string& unread : job.unread) job.dropped += TrimToCap(unread);
  report.stdout_text = std::exchange(job.unread[0], {});
  report.stderr_text = std::exchange(job.unread[1], {});
  report.dropped_bytes = std::exchange(job.dropped, 0);
  report.timeout = job.timeout;
  return report;
}

std::vector<std::thread> BackgroundJobs::Prune() {
  std::vector<std::thread> done;
  while (jobs_.size() > kMaxKept) {
    const auto oldest_ended =
        std::find_if(jobs_.begin(), jobs_.end(), [](const auto& job) { return job->ended; });
    if (oldest_ended == jobs_.end()) break;
    done.push_back(std::move((*oldest_ended)->thread));
    jobs_.erase(oldest_ended);
  }
  return done;
}

void BackgroundJobs::RunJob(const std::shared_ptr<Job>& job, const CommandRequest& request) {
  std::shared_lock<std::shared_mutex> worktree_guard;
  if (worktree_lock_ != nullptr) worktree_guard = std::shared_lock(*worktree_lock_);
  const OutputCallback keep = [this, &job](OutputStream stream, std::string_view data) {
    std::lock_guard lock(mutex_);
    std::string& unread = job->unread[stream == OutputStream::kStdout ? 0 : 1];
    unread.append(data);
    // Trimmed back to the cap only once it is twice over: a chatty command costs one move per
    // 256 KiB, not one per chunk (TakeReport trims the rest).
    if (unread.size() > 2 * kMaxUnreadBytes) job->dropped += TrimToCap(unread);
    changed_.notify_all();
  };
  RunResult result = runner_.Run(request, false, *job->cancel, keep);
  std::lock_guard lock(mutex_);
  job->result = std::move(result);
  job->ended = true;
  changed_.notify_all();
}

Result<BackgroundJobs::Report> BackgroundJobs::Start(CommandRequest request, std::string command,
                                                     std::chrono::milliseconds settle) {
  std::shared_ptr<Job> job;
  std::vector<std::thread> forgotten;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return Fail(ErrorCode::kUnavailable, "the session is ending");
    if (RunningLocked() >= kMaxRunning) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("{} background commands are already running ({}); stop one with "
                              "stop_background first",
                              kMaxRunning, RunningListLocked()));
    }
    job = std::make_shared<Job>();
    job->id = fmt::format("bg-{}", next_id_++);
    job->command = std::move(command);
    job->timeout = request.timeout.value_or(std::chrono::milliseconds(0));
    request.capture_output = false;  // the callback keeps it, until read
    request.cancel_fd = job->cancel->fd();
    jobs_.push_back(job);
    try {
      job->thread =
          std::thread([this, job, request = std::move(request)] { RunJob(job, request); });
    } catch (const std::system_error& e) {
      jobs_.pop_back();  // never started: it must not count as running
      return Fail(ErrorCode::kSystem, fmt::format("cannot start a thread for it: {}", e.what()));
    }
    forgotten = Prune();
  }
  for (std::thread& thread : forgotten) {
    if (thread.joinable()) thread.join();
  }
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, settle, [&] { return job->ended; });
  return TakeReport(*job);
}

Result<BackgroundJobs::Report> BackgroundJobs::Read(std::string_view id,
                                                    std::chrono::milliseconds wait,
                                                    const CancelToken& cancel) {
  std::unique_lock lock(mutex_);
  const std::shared_ptr<Job> job = Find(id);
  if (!job) {
    const std::string running = RunningListLocked();
    return Fail(ErrorCode::kNotFound,
                fmt::format("no background command '{}' in this session ({}; ended commands "
                            "beyond the newest {} are forgotten)",
                            Abbreviated(id),
                            running.empty() ? "none is running" : "running: " + running, kMaxKept));
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!job->ended && job->unread[0].empty() && job->unread[1].empty() && !cancel.cancelled()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    changed_.wait_until(lock, std::min(deadline, now + kCancelPoll));
  }
  return TakeReport(*job);
}

Result<BackgroundJobs::Report> BackgroundJobs::Stop(std::string_view id) {
  std::unique_lock lock(mutex_);
  const std::shared_ptr<Job> job = Find(id);
  if (!job) {
    return Fail(ErrorCode::kNotFound,
                fmt::format("no background command '{}' in this session", Abbreviated(id)));
  }
  if (!job->ended) {
    job->stopped = true;
    job->cancel->Cancel();
    changed_.wait_for(lock, kStopWait, [&] { return job->ended; });
  }
  return TakeReport(*job);
}

void BackgroundJobs::StopAll() {
  std::list<std::shared_ptr<Job>> all;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    for (const std::shared_ptr<Job>& job : jobs_) {
      if (job->ended) continue;
      job->stopped = true;
      job->cancel->Cancel();
    }
    all.swap(jobs_);
  }
  // Each run returns once its tree is dead (the token's descriptor wakes its supervisor).
  for (const std::shared_ptr<Job>& job : all) {
    if (job->thread.joinable()) job->thread.join();
  }
}

}  // namespace cordon::mcp
