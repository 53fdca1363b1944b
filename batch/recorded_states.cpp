#include "batch/recorded_states.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "sim/data.h"
#include "sim/kinematics.h"

namespace diffloco::batch {
namespace {

std::ifstream open(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  return f;
}

template <typename T>
void read(std::ifstream& f, T* out, size_t count, const std::string& path) {
  if (!f.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(sizeof(T) * count)))
    throw std::runtime_error(path + ": ends early");
}

// The rotation angle about the unit axis a of the rotation M (M = exp(theta [a]x)).
double angleAbout(const sim::Mat3& M, const sim::Vec3& a) {
  const sim::Vec3 s(M(2, 1) - M(1, 2), M(0, 2) - M(2, 0), M(1, 0) - M(0, 1));
  return std::atan2(0.5 * s.dot(a), 0.5 * (M.trace() - 1));
}

// The rotation vector w with R = exp([w]x).
sim::Vec3 logRotation(const sim::Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

// A state's configuration from one frame of body poses (x y z qw qx qy qz per recorded body):
// the base pose as recorded, each joint angle from its body's rotation relative to the rotation
// it has at angle 0 given its parent (forward kinematics, bodies parent first).
sim::VecX configuration(const sim::Model& model, const std::vector<int>& recordIndex,
                        const double* poses, sim::Data& data) {
  sim::VecX q = sim::neutralConfiguration(model);
  const double* base = poses + 7 * recordIndex[0];
  for (int k = 0; k < 7; ++k) q[k] = base[k];
  q.segment<4>(3).normalize();
  for (int i = 1; i < model.nbodies(); ++i) {
    sim::forwardKinematics(model, data, q);  // body i at angle 0, its parent as solved
    const double* b = poses + 7 * recordIndex[i];
    const sim::Mat3 R = sim::Quat(b[3], b[4], b[5], b[6]).normalized().toRotationMatrix();
    q[6 + i] = angleAbout(data.R[i].transpose() * R, model.bodies[i].axis);
  }
  return q;
}

}  // namespace

RecordedStates loadRecordedStates(const sim::Model& model, const std::string& prefix,
                                  double frameDt) {
  if (!(frameDt > 0))
    throw std::runtime_error(prefix + ": the frame interval must be > 0 s, got " +
                             std::to_string(frameDt));
  const int nq = model.nq(), nv = model.nv(), nj = model.nj();
  // Bodies: the record's names, matched to the model's.
  std::vector<std::string> names;
  {
    const std::string path = prefix + ".bodies.txt";
    std::ifstream f = open(path);
    for (std::string line; std::getline(f, line);)
      if (!line.empty()) names.push_back(line);
  }
  std::vector<int> recordIndex(model.nbodies(), -1);
  for (int i = 0; i < model.nbodies(); ++i)
    for (size_t r = 0; r < names.size(); ++r)
      if (names[r] == model.bodies[i].name) recordIndex[i] = static_cast<int>(r);
  for (int i = 0; i < model.nbodies(); ++i)
    if (recordIndex[i] < 0)
      throw std::runtime_error(prefix + ".bodies.txt: no body '" + model.bodies[i].name + "'");

  RecordedStates out;
  {
    const std::string path = prefix + ".poses.bin";
    std::ifstream f = open(path);
    std::int32_t count = 0, nb = 0;
    read(f, &count, 1, path);
    read(f, &nb, 1, path);
    if (count <= 0 || nb != static_cast<std::int32_t>(names.size()))
      throw std::runtime_error(path + ": " + std::to_string(count) + " states of " +
                               std::to_string(nb) + " bodies, expected " +
                               std::to_string(names.size()) + " bodies");
    // The header's count against the file's size, before anything is allocated for it.
    const auto expected = 8 + static_cast<std::uintmax_t>(count) * 2 * 7 * nb * sizeof(double);
    if (std::filesystem::file_size(path) != expected)
      throw std::runtime_error(path + ": " + std::to_string(std::filesystem::file_size(path)) +
                               " bytes, expected " + std::to_string(expected) + " for " +
                               std::to_string(count) + " states");
    std::vector<double> frames(static_cast<size_t>(2 * 7 * nb));
    WorldSet& w = out.worlds;
    w.n = count;
    w.q.resize(static_cast<size_t>(count) * nq);
    w.v.resize(static_cast<size_t>(count) * nv);
    w.target.resize(static_cast<size_t>(count) * nj);
    sim::Data data(model);
    for (int k = 0; k < count; ++k) {
      read(f, frames.data(), frames.size(), path);
      const sim::VecX q0 = configuration(model, recordIndex, frames.data(), data);
      const sim::VecX q1 = configuration(model, recordIndex, frames.data() + 7 * nb, data);
      sim::forwardKinematics(model, data, q0);
      for (int i = 0; i < model.nbodies(); ++i) {
        const double* b = frames.data() + 7 * recordIndex[i];
        out.maxPositionError =
            std::max(out.maxPositionError, (data.p[i] - sim::Vec3(b[0], b[1], b[2])).norm());
      }
      double* q = &w.q[static_cast<size_t>(k) * nq];
      double* v = &w.v[static_cast<size_t>(k) * nv];
      double* t = &w.target[static_cast<size_t>(k) * nj];
      for (int i = 0; i < nq; ++i) q[i] = q0[i];
      // v: world linear velocity, body-frame angular velocity, joint rates (sim::integrate's
      // convention, sim/moreau_step.h).
      for (int i = 0; i < 3; ++i) v[i] = (q1[i] - q0[i]) / frameDt;
      const sim::Vec3 wb =
          logRotation(sim::baseRotation(q0).transpose() * sim::baseRotation(q1)) / frameDt;
      for (int i = 0; i < 3; ++i) v[3 + i] = wb[i];
      for (int j = 0; j < nj; ++j) {
        const double d = std::remainder(q1[7 + j] - q0[7 + j], 2 * M_PI);
        v[6 + j] = d / frameDt;
        t[j] = q1[7 + j];
      }
    }
  }
  {
    const std::string path = prefix + ".field.bin";
    std::ifstream f = open(path);
    double head[3];
    std::int32_t dims[2];
    read(f, head, 3, path);
    read(f, dims, 2, path);
    if (dims[0] < 2 || dims[1] < 2 || !(head[2] > 0))
      throw std::runtime_error(path + ": a grid of at least 2 x 2 samples at a spacing > 0 " +
                               "expected, got " + std::to_string(dims[0]) + " x " +
                               std::to_string(dims[1]) + " at " + std::to_string(head[2]));
    const auto expected = 3 * sizeof(double) + 2 * sizeof(std::int32_t) +
                          static_cast<std::uintmax_t>(dims[0]) * dims[1] * sizeof(double);
    if (std::filesystem::file_size(path) != expected)
      throw std::runtime_error(path + ": " + std::to_string(std::filesystem::file_size(path)) +
                               " bytes, expected " + std::to_string(expected) + " for a " +
                               std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + " grid");
    sim::HeightField& hf = out.field;
    hf.originX = head[0];
    hf.originY = head[1];
    hf.spacing = head[2];
    hf.nx = dims[0];
    hf.ny = dims[1];
    hf.heights.resize(static_cast<size_t>(hf.nx) * hf.ny);
    read(f, hf.heights.data(), hf.heights.size(), path);
  }
  return out;
}

}  // namespace diffloco::batch
