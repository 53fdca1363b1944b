// batch/recorded_states.h: states written as tools/record/rollout_states.py writes them (body poses
// of two frames from forward kinematics of known configurations) come back as those configurations,
// finite-difference velocities and next-frame targets; bad files are errors naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include "batch/recorded_states.h"
#include "robots/robot.h"
#include "sim/data.h"
#include "sim/kinematics.h"
#include "tests/support/scratch_dir.h"

using namespace diffloco;

namespace {

namespace fs = std::filesystem;

// Writes PREFIX.{bodies.txt,poses.bin,field.bin} for the pairs (q0[k], q1[k]).
void writeRecord(const sim::Model& model, const std::string& prefix,
                 const std::vector<sim::VecX>& q0, const std::vector<sim::VecX>& q1) {
  std::ofstream names(prefix + ".bodies.txt");
  for (int i = model.nbodies() - 1; i >= 0; --i)
    names << model.bodies[i].name << "\n";  // any order
  std::ofstream poses(prefix + ".poses.bin", std::ios::binary);
  const std::int32_t head[2] = {static_cast<std::int32_t>(q0.size()), model.nbodies()};
  poses.write(reinterpret_cast<const char*>(head), sizeof head);
  sim::Data data(model);
  for (size_t k = 0; k < q0.size(); ++k)
    for (const sim::VecX* q : {&q0[k], &q1[k]}) {
      sim::forwardKinematics(model, data, *q);
      for (int i = model.nbodies() - 1; i >= 0; --i) {
        const sim::Quat r(data.R[i]);
        const double pose[7] = {data.p[i].x(), data.p[i].y(), data.p[i].z(), r.w(),
                                r.x(),         r.y(),         r.z()};
        poses.write(reinterpret_cast<const char*>(pose), sizeof pose);
      }
    }
  std::ofstream field(prefix + ".field.bin", std::ios::binary);
  const double g[3] = {-1, -2, 0.5};
  const std::int32_t n[2] = {3, 4};
  field.write(reinterpret_cast<const char*>(g), sizeof g);
  field.write(reinterpret_cast<const char*>(n), sizeof n);
  for (int k = 0; k < 12; ++k) {
    const double h = 0.01 * k;
    field.write(reinterpret_cast<const char*>(&h), sizeof h);
  }
}

}  // namespace

TEST(RecordedStates, RecoversConfigurationsVelocitiesAndTargets) {
  const Robot robot = loadRobot("anymal");
  const sim::Model& model = robot.model;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  const double dt = 0.02;
  std::vector<sim::VecX> q0, q1;
  for (int k = 0; k < 20; ++k) {
    sim::VecX a = robot.standingConfiguration();
    a[0] = u(rng), a[1] = u(rng);
    const sim::Quat r = sim::Quat(1, 0.3 * u(rng), 0.3 * u(rng), u(rng)).normalized();
    a.segment<4>(3) << r.w(), r.x(), r.y(), r.z();
    for (int j = 0; j < model.nj(); ++j) a[7 + j] += 0.5 * u(rng);
    sim::VecX b = a;
    b[0] += 0.01;
    for (int j = 0; j < model.nj(); ++j) b[7 + j] += 0.02 * u(rng);
    q0.push_back(a);
    q1.push_back(b);
  }
  const diffloco::testing::ScratchDir scratch("diffloco_recorded_states");
  const std::string prefix = (scratch / "record").string();
  writeRecord(model, prefix, q0, q1);
  const batch::RecordedStates rec = batch::loadRecordedStates(model, prefix, dt);
  ASSERT_EQ(rec.worlds.n, 20);
  EXPECT_LT(rec.maxPositionError, 1e-9);
  for (int k = 0; k < 20; ++k) {
    const double* q = &rec.worlds.q[k * model.nq()];
    const double* v = &rec.worlds.v[k * model.nv()];
    for (int i = 0; i < model.nq(); ++i) EXPECT_NEAR(q[i], q0[k][i], 1e-9) << k << ", " << i;
    EXPECT_NEAR(v[0], 0.01 / dt, 1e-9);
    for (int j = 0; j < model.nj(); ++j) {
      EXPECT_NEAR(v[6 + j], (q1[k][7 + j] - q0[k][7 + j]) / dt, 1e-7);
      EXPECT_NEAR(rec.worlds.target[k * model.nj() + j], q1[k][7 + j], 1e-9);
    }
  }
  EXPECT_EQ(rec.field.nx, 3);
  EXPECT_EQ(rec.field.ny, 4);
  EXPECT_DOUBLE_EQ(rec.field.heights[11], 0.11);

  // A bad frame interval, a record cut short, a missing file: errors naming what and where.
  auto message = [&](double frameDt) {
    try {
      batch::loadRecordedStates(model, prefix, frameDt);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(0).find("frame interval must be > 0"), std::string::npos) << message(0);
  fs::resize_file(prefix + ".poses.bin", 100);
  EXPECT_NE(message(dt).find("poses.bin: 100 bytes, expected"), std::string::npos) << message(dt);
  fs::remove(prefix + ".field.bin");
  EXPECT_THROW(batch::loadRecordedStates(model, prefix + "_none", dt), std::runtime_error);
}
