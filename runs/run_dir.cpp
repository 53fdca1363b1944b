#include "runs/run_dir.h"

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "io/excerpt.h"

#ifndef DIFFLOCO_SOURCE_DIR
#define DIFFLOCO_SOURCE_DIR "."
#endif
#ifndef DIFFLOCO_GIT_COMMIT
#define DIFFLOCO_GIT_COMMIT "unknown"
#endif

namespace diffloco::runs {
namespace fs = std::filesystem;

namespace {

// Output of a shell command, or nullopt-like empty + ok = false.
bool capture(const std::string& cmd, std::string& out) {
  out.clear();
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return false;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) out.append(buf.data(), n);
  return pclose(p.release()) == 0;
}

std::string git(const std::string& args) {
  std::string out;
  if (!capture("git -C '" + std::string(DIFFLOCO_SOURCE_DIR) + "' " + args + " 2>/dev/null", out))
    return "";
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string createRunDir(const std::string& parent, const std::string& name) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
  fs::create_directories(parent);
  const fs::path base = fs::path(parent) / (std::string(stamp) + "_" + name);
  fs::path dir = base;
  for (int i = 2; !fs::create_directory(dir); ++i) dir = base.string() + "_" + std::to_string(i);
  return dir.string();
}

std::string gitDescription() {
  const std::string sha = trim(git("rev-parse HEAD"));
  if (sha.empty()) return std::string(DIFFLOCO_GIT_COMMIT) + " (from the build; no git checkout)";
  const std::string status = trim(git("status --porcelain --untracked-files=no"));
  return sha + (status.empty() ? "" : " (dirty)");
}

void writeGitInfo(const std::string& dir) {
  try {
    std::ofstream info(fs::path(dir) / "git.txt");
    info << "commit: " << gitDescription() << "\n";
    const std::string status = git("status --porcelain");
    if (!status.empty()) info << "status:\n" << status;
    const std::string diff = git("diff HEAD");
    if (!diff.empty()) {
      std::ofstream d(fs::path(dir) / "git.diff");
      d << diff;
    }
  } catch (...) {
    // fail soft: the run matters more than its provenance note
  }
}

std::string startCommit(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "git.txt");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("commit: ", 0) == 0) return line.substr(8);
  return "";
}

std::vector<std::pair<int, std::string>> listCheckpoints(const std::string& dir) {
  std::vector<std::pair<int, std::string>> out;
  static const std::regex re("model_([0-9]+)\\.pt");
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string f = e.path().filename().string();
    if (std::regex_match(f, m, re)) out.emplace_back(std::stoi(m[1]), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// CSV

MetricsCsv::MetricsCsv(const std::string& dir, std::vector<std::string> columns, int resumeAfter)
    : path_((fs::path(dir) / "metrics.csv").string()), columns_(std::move(columns)) {
  std::string header;
  for (size_t i = 0; i < columns_.size(); ++i) header += (i ? "," : "") + columns_[i];
  std::string kept;
  if (resumeAfter >= 0 && fs::exists(path_)) {
    std::ifstream in(path_);
    std::string line;
    std::getline(in, line);
    if (line != header)
      throw std::runtime_error(path_ + ": its columns differ from this run's; cannot resume it");
    while (std::getline(in, line)) {
      const int it = std::atoi(line.substr(0, line.find(',')).c_str());
      if (it <= resumeAfter) kept += line + "\n";
    }
  }
  // Replaced whole, then appended to: a kill while the kept rows are rewritten (a resume's start)
  // leaves the old file, never an empty one that no later resume could read.
  io::writeFileAtomic(path_, header + "\n" + kept);
  out_.open(path_, std::ios::app);
  if (!out_) throw std::runtime_error(path_ + ": cannot write");
}

int removeStaleTemporaries(const std::string& dir) {
  // io::temporaryPathFor's names: <file>.<pid>.<counter>.tmp. Only this process writes the run
  // folder now (a resume), so another pid's temporary is a write that a kill interrupted.
  static const std::regex name(R"(.+\.([0-9]+)\.[0-9]+\.tmp)");
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string f = e.path().filename().string();
    if (!e.is_regular_file(ec) || !std::regex_match(f, m, name)) continue;
    if (m[1].str() == std::to_string(::getpid())) continue;  // text: no overflow on odd names
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

void MetricsCsv::row(const std::map<std::string, double>& values) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i) out_ << ",";
    auto it = values.find(columns_[i]);
    if (it != values.end() && std::isfinite(it->second)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", it->second);
      out_ << buf;
    }
  }
  out_ << "\n";
  out_.flush();
}

int Csv::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

Csv readCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read");
  Csv c;
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty file (no header)");
  c.columns = io::splitCsvFields(line);
  int lineNo = 1;
  while (std::getline(in, line)) {
    ++lineNo;
    const std::vector<std::string> cells = io::splitCsvFields(line);
    if (cells.empty()) continue;
    std::vector<double> row;
    for (const std::string& cell : cells) {
      char* end = nullptr;
      const double v = cell.empty() ? std::nan("") : std::strtod(cell.c_str(), &end);
      if (!cell.empty() && (end == cell.c_str() || *end != '\0'))
        throw std::runtime_error(path + ":" + std::to_string(lineNo) + ": '" + io::excerpt(cell) +
                                 "' is not a number");
      row.push_back(v);
    }
    if (row.size() != c.columns.size())
      throw std::runtime_error(path + ":" + std::to_string(lineNo) + ": " +
                               std::to_string(row.size()) + " cells, the header has " +
                               std::to_string(c.columns.size()));
    c.rows.push_back(std::move(row));
  }
  return c;
}

}  // namespace diffloco::runs
