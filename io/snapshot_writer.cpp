#include "io/snapshot_writer.hpp"

#include <chrono>

#include "io/output_file.hpp"

namespace minimod::io {

SnapshotWriter::SnapshotWriter(OutputFile& file, std::string field, int slots,
                               std::function<const float*(int)> buffer,
                               std::function<void(int)> wait_copy)
    : file_(file),
      field_(std::move(field)),
      buffer_(std::move(buffer)),
      wait_copy_(std::move(wait_copy)),
      busy_(static_cast<size_t>(slots), false),
      thread_([this] { loop(); }) {}

SnapshotWriter::~SnapshotWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int SnapshotWriter::acquire() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    for (size_t s = 0; s < busy_.size(); ++s) {
      if (!busy_[s]) {
        busy_[s] = true;
        waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return static_cast<int>(s);
      }
    }
    changed_.wait(lock);
  }
}

void SnapshotWriter::submit(int slot, int index, double time) { submit_part(slot, index, time, 0, 0); }

void SnapshotWriter::submit_part(int slot, int index, double time, int first_plane, int planes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({slot, index, time, first_plane, planes});
  }
  changed_.notify_all();
}

void SnapshotWriter::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] {
    if (error_) return true;
    for (bool b : busy_)
      if (b) return false;
    return queue_.empty();
  });
  if (error_) std::rethrow_exception(error_);
}

void SnapshotWriter::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop requested and nothing left
      job = queue_.front();
      queue_.pop_front();
    }
    try {
      wait_copy_(job.slot);
      if (job.planes == 0)
        file_.write_snapshot(field_, job.index, job.time, buffer_(job.slot));
      else
        file_.write_snapshot_part(field_, job.index, job.time, job.first_plane, job.planes, buffer_(job.slot));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_[static_cast<size_t>(job.slot)] = false;
    }
    changed_.notify_all();
  }
}

}  // namespace minimod::io
