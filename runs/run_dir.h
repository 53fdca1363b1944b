// Run folders: runs/<YYYY-MM-DD_HH-MM-SS>_<name>/ (ISO time stamps sort correctly) holding
//   config.yaml        the fully resolved config (train/config.h)
//   git.txt, git.diff  the source commit and uncommitted changes (when the sources are a git
//                      checkout; otherwise the commit the binary was configured from)
//   metrics.csv        one row per iteration
//   events.out.tfevents.*  TensorBoard scalars (runs/tfevents.h)
//   model_<iter>.pt    checkpoints, written atomically (io/atomic_file.h)
//   policy.pt          the final actor with its normaliser (policies/actor_critic.h)
//   train.log          the console output
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace diffloco::runs {

// Creates <parent>/<local time>_<name> (with a numeric suffix if it exists) and returns it.
std::string createRunDir(const std::string& parent, const std::string& name);
// Writes git.txt (commit, dirty state) and git.diff into dir; never throws.
void writeGitInfo(const std::string& dir);
// The commit as one line ("<sha>", "<sha> (dirty)", or "unknown").
std::string gitDescription();
// The commit a run started from: the "commit: " line of dir/git.txt ("" when there is none).
std::string startCommit(const std::string& dir);

// model_<iter>.pt files in dir, sorted by iteration (.tmp files are ignored).
std::vector<std::pair<int, std::string>> listCheckpoints(const std::string& dir);

// metrics.csv: a header of column names, then one row per iteration; absent or non-finite
// values are empty cells.
class MetricsCsv {
 public:
  // Opens dir/metrics.csv. resumeAfter >= 0 keeps the existing rows of iterations <= resumeAfter
  // (a resumed run drops what was logged after its checkpoint) and checks the header.
  MetricsCsv(const std::string& dir, std::vector<std::string> columns, int resumeAfter = -1);
  void row(const std::map<std::string, double>& values);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

// Removes the temporaries (io::temporaryPathFor) that earlier processes left in `dir` when they
// were killed while writing; returns how many. For a resume, when this process alone writes there.
int removeStaleTemporaries(const std::string& dir);

// Reads a metrics.csv (or any CSV with a header): column names and rows of numbers (NaN for
// empty cells).
struct Csv {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  int column(const std::string& name) const;  // -1 when absent
};
Csv readCsv(const std::string& path);

}  // namespace diffloco::runs
