// TensorBoard event files: CRC-32C against its published check value, the masking, and a written
// file read back record by record (framing, both CRCs, the Event/Summary protobuf fields). A
// corrupted byte is detected.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runs/tfevents.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco::runs;
namespace fs = std::filesystem;

TEST(TfEvents, Crc32cCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C catalogue's check value
  EXPECT_EQ(crc32c("", 0), 0u);
  const std::uint32_t c = crc32c("abc", 3);
  EXPECT_EQ(maskedCrc32c("abc", 3), ((c >> 15) | (c << 17)) + 0xA282EAD8u);
}

TEST(TfEvents, WrittenFileReadsBack) {
  const diffloco::testing::ScratchDir scratch("diffloco_tfevents_test");
  const fs::path dir = scratch.path();
  std::string path;
  {
    EventWriter w(dir.string());
    path = w.path();
    w.scalars(1, {{"Train/mean_reward", 12.5}, {"Loss/actor", -0.25}}, 1000.5);
    w.scalars(2, {{"Train/mean_reward", 13.75}}, 1001.5);
    w.scalars(300000, {{"Perf/total_fps", 1e6}}, 1002.0);  // multi-byte varint step
  }
  EXPECT_EQ(fs::path(path).filename().string().rfind("events.out.tfevents.", 0), 0u);
  const EventFile f = readEventFile(path);
  EXPECT_EQ(f.records, 4);
  EXPECT_EQ(f.fileVersion, "brain.Event:2");
  ASSERT_EQ(f.scalars.size(), 4u);
  EXPECT_EQ(f.scalars[0].tag, "Loss/actor");  // one summary per step, tags in order
  EXPECT_EQ(f.scalars[0].value, -0.25f);
  EXPECT_EQ(f.scalars[0].step, 1);
  EXPECT_EQ(f.scalars[0].wallTime, 1000.5);
  EXPECT_EQ(f.scalars[1].tag, "Train/mean_reward");
  EXPECT_EQ(f.scalars[1].value, 12.5f);
  EXPECT_EQ(f.scalars[2].step, 2);
  EXPECT_EQ(f.scalars[2].value, 13.75f);
  EXPECT_EQ(f.scalars[3].step, 300000);
  EXPECT_EQ(f.scalars[3].value, 1e6f);

  // One flipped byte in the last record's payload: its data CRC no longer matches.
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(-8, std::ios::end);
    char b;
    io.read(&b, 1);
    io.seekp(-8, std::ios::end);
    b ^= 0x40;
    io.write(&b, 1);
  }
  EXPECT_THROW(readEventFile(path), std::runtime_error);
}

#ifndef DIFFLOCO_TENSORBOARD_PYTHON
#define DIFFLOCO_TENSORBOARD_PYTHON "python3"
#endif

// TensorBoard's own reader parses our file: every scalar's tag, step and value.
TEST(TfEvents, TensorBoardReadsOurFile) {
  const std::string python = DIFFLOCO_TENSORBOARD_PYTHON;
  if (std::system((python + " -c 'import tensorboard' >/dev/null 2>&1").c_str()) != 0) {
#ifdef DIFFLOCO_REQUIRE_ALL
    FAIL() << python << " has no tensorboard (bash .ci/install-deps installs it)";
#else
    GTEST_SKIP() << python << " has no tensorboard (bash .ci/install-deps installs it)";
#endif
  }
  const diffloco::testing::ScratchDir scratch("diffloco_tfevents_tensorboard");
  const fs::path dir = scratch.path();
  EventWriter w(dir.string());
  w.scalars(7, {{"a/b", 3.0}, {"c", -0.5}});
  w.scalars(300000, {{"a/b", 1e6}});
  w.flush();
  // The scalars as TensorBoard reads them (its loader turns a simple_value into a scalar tensor).
  const std::string cmd =
      python +
      " -c \"from tensorboard.backend.event_processing.event_file_loader import "
      "EventFileLoader as L; import sys; "
      "got=[(e.step, v.tag, v.tensor.float_val[0] if v.HasField('tensor') else v.simple_value) "
      "for e in L(sys.argv[1]).Load() for v in e.summary.value]; "
      "assert got == [(7, 'a/b', 3.0), (7, 'c', -0.5), (300000, 'a/b', 1e6)], got\" '" +
      w.path() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}
