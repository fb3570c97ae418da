// SnapshotWriter: writes snapshots on a background thread while the time loop goes on. The loop
// asks for a free slot (waiting only when the writer has fallen behind), starts the propagator's
// asynchronous copy into that slot's host buffer and submits it; the writer waits for the copy,
// writes it to the OutputFile and frees the slot. Only the writer thread touches the file's
// snapshot datasets until finish() returns.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace minimod::io {

class OutputFile;

class SnapshotWriter {
 public:
  /// `wait_copy(slot)` blocks until slot's data is in `buffer(slot)`.
  SnapshotWriter(OutputFile& file, std::string field, int slots,
                 std::function<const float*(int)> buffer, std::function<void(int)> wait_copy);
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  /// A slot whose buffer may be overwritten (blocks while all are queued). Rethrows a write error.
  int acquire();
  void submit(int slot, int index, double time);
  /// The same for planes [first_plane, first_plane + planes) of snapshot `index`, the slot's
  /// buffer holding just those (OutputFile::write_snapshot_part).
  void submit_part(int slot, int index, double time, int first_plane, int planes);
  /// Waits for every submitted snapshot to be written; rethrows a write error.
  void finish();
  /// Seconds the time loop spent waiting for a free slot.
  double seconds_waited() const { return waited_; }

 private:
  struct Job {
    int slot, index;
    double time;
    int first_plane = 0, planes = 0;  // planes 0: the whole snapshot
  };
  void loop();

  OutputFile& file_;
  std::string field_;
  std::function<const float*(int)> buffer_;
  std::function<void(int)> wait_copy_;
  std::vector<bool> busy_;
  std::deque<Job> queue_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr error_;
  double waited_ = 0;
  std::thread thread_;
};

}  // namespace minimod::io
