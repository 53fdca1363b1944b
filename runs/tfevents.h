// TensorBoard event files written without TensorFlow or protobuf: the TFRecord framing
//   uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)
// (little endian) around hand-encoded `Event` protos (tensorflow/core/util/event.proto):
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
// The first record carries file_version "brain.Event:2", as TensorBoard expects.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace diffloco::runs {

// CRC-32C (Castagnoli), and TFRecord's masking of it.
std::uint32_t crc32c(const void* data, size_t n);
std::uint32_t maskedCrc32c(const void* data, size_t n);

class EventWriter {
 public:
  // Creates <dir>/events.out.tfevents.<unix seconds>.<host>.
  explicit EventWriter(const std::string& dir);
  // One event at `step` holding every (tag, value) as a scalar summary.
  void scalars(std::int64_t step, const std::map<std::string, double>& values,
               double wallTime = -1);
  void flush() { out_.flush(); }
  const std::string& path() const { return path_; }

 private:
  void record(const std::string& data);
  std::string path_;
  std::ofstream out_;
};

// Reading back (tests, tools): every record's framing and CRCs are checked; throws on a bad file.
struct ScalarEvent {
  double wallTime = 0;
  std::int64_t step = 0;
  std::string tag;
  float value = 0;
};
struct EventFile {
  std::string fileVersion;
  std::vector<ScalarEvent> scalars;
  int records = 0;
};
EventFile readEventFile(const std::string& path);

}  // namespace diffloco::runs
