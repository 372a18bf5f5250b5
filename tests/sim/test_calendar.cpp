// SPDX-License-Identifier: Apache-2.0
// The model's tie order (sim/src/machine/calendar.h: time, then the agent's rank), checked
// against orders worked out by hand: agents that record when they act and may wake others.
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "graph_helpers.h"
#include "machine/calendar.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/simulation.h"
#include "pypto/sim/systemc_context.h"

namespace {

using pypto::common::kNever;
using pypto::common::TimePs;
using pypto::sim::Calendar;
using pypto::sim::CalendarAgent;
using Acts = std::vector<std::pair<TimePs, std::string>>;

// The model's time: the calendar's (SystemC's lags behind it within a quantum).
Calendar* current = nullptr;
TimePs now() { return current->now(); }

// Records "name" at each act and then runs its script (which may wake agents).
class Recorder : public CalendarAgent {
 public:
  Recorder(Calendar& cal, std::string name, Acts& acts)
      : rank(cal.join(*this)), name_(std::move(name)), acts_(acts) {}
  void act() override {
    acts_.emplace_back(now(), name_);
    sc_times.push_back(sc_core::sc_time_stamp().value());
    if (script) script();
  }
  std::uint32_t rank;
  std::function<void()> script;
  std::vector<TimePs> sc_times;  // SystemC's time at each act

 private:
  std::string name_;
  Acts& acts_;
};

// A calendar with agents a, b, c, d (ranks 0..3) in a fresh SystemC context.
struct Fixture {
  Fixture() {
    pypto::sim::fresh_systemc_context();
    cal = std::make_unique<Calendar>("calendar");
    current = cal.get();
    for (const char* n : {"a", "b", "c", "d"}) {
      agents.push_back(std::make_unique<Recorder>(*cal, n, acts));
    }
  }
  Recorder& operator[](std::size_t i) { return *agents[i]; }
  Acts acts;
  std::unique_ptr<Calendar> cal;
  std::vector<std::unique_ptr<Recorder>> agents;
};

}  // namespace

TEST_CASE("calendar: two agents due at one time act in rank order, whatever the order asked",
          "[calendar]") {
  Fixture f;
  f.cal->wake_at(f[3].rank, 100);  // d asks first
  f.cal->wake_at(f[1].rank, 100);  // then b, for the same time
  sc_core::sc_start();
  CHECK(f.acts == Acts{{100, "b"}, {100, "d"}});
}

TEST_CASE("calendar: an earlier time goes first whatever the ranks", "[calendar]") {
  Fixture f;
  f.cal->wake_at(f[0].rank, 20);
  f.cal->wake_at(f[3].rank, 10);
  f.cal->wake_at(f[2].rank, 20);
  f.cal->wake_at(f[1].rank, 30);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{10, "d"}, {20, "a"}, {20, "c"}, {30, "b"}});
  CHECK(now() == 30);
}

TEST_CASE("calendar: an agent woken for the current time acts within it, in rank order",
          "[calendar]") {
  Fixture f;
  // At 50 c is due, then d. c wakes a (rank 0) and d's rank is higher: a acts before d.
  // a in turn wakes b for now (after a, before d) and d for later than its own 50: kept.
  f[2].script = [&] { f.cal->wake_at(f[0].rank, now()); };
  f[0].script = [&] {
    f.cal->wake_at(f[1].rank, now());
    f.cal->wake_at(f[3].rank, 70);  // d keeps its earlier wake-up at 50
  };
  f.cal->wake_at(f[3].rank, 50);
  f.cal->wake_at(f[2].rank, 50);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{50, "c"}, {50, "a"}, {50, "b"}, {50, "d"}});
}

TEST_CASE("calendar: set moves or withdraws a wake-up, and wake_at keeps the earlier one",
          "[calendar]") {
  Fixture f;
  f.cal->wake_at(f[0].rank, 40);
  f.cal->wake_at(f[0].rank, 60);  // later: ignored
  CHECK(f.cal->pending(f[0].rank) == 40);
  f.cal->set(f[1].rank, 10);
  f.cal->set(f[1].rank, 45);  // moved later
  f.cal->set(f[2].rank, 5);
  f.cal->set(f[2].rank, kNever);  // withdrawn
  CHECK(f.cal->pending(f[2].rank) == kNever);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{40, "a"}, {45, "b"}});
}

TEST_CASE("calendar: an acting agent that re-arms itself keeps its place in the order",
          "[calendar]") {
  Fixture f;
  int rounds = 0;
  // b acts at 0, 10 and 20; a at 10 and 20 as well: at each tie a (rank 0) goes first.
  f[1].script = [&] {
    if (++rounds < 3) f.cal->set(f[1].rank, now() + 10);
  };
  f[0].script = [&] {
    if (now() < 20) f.cal->set(f[0].rank, now() + 10);
  };
  f.cal->wake_at(f[1].rank, 0);
  f.cal->wake_at(f[0].rank, 10);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{0, "b"}, {10, "a"}, {10, "b"}, {20, "a"}, {20, "b"}});
}

TEST_CASE("calendar: stop ends the run after the acting agent", "[calendar]") {
  Fixture f;
  f[0].script = [&] { f.cal->stop(); };
  f.cal->wake_at(f[0].rank, 5);
  f.cal->wake_at(f[1].rank, 5);
  f.cal->wake_at(f[2].rank, 9);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{5, "a"}});
}

TEST_CASE("calendar: times within a quantum share one SystemC activation, in the same order",
          "[calendar]") {
  Fixture f;
  // a re-arms itself 400 ns later three times; b acts at 900 ns, between a's second and third
  // acts. With a 1 us quantum, 0.4 us and 0.9 us run in the activation at 0, 1.2 us in the
  // next (at 1.2 us itself), whose quantum also covers b's 1.5 us.
  constexpr TimePs kNs = 1000;
  f[0].script = [&] {
    if (now() < 1200 * kNs) f.cal->set(f[0].rank, now() + 400 * kNs);
  };
  f[1].script = [&] {
    if (now() < 1000 * kNs) f.cal->set(f[1].rank, 1500 * kNs);
  };
  f.cal->wake_at(f[0].rank, 0);
  f.cal->wake_at(f[1].rank, 900 * kNs);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{0, "a"},
                       {400 * kNs, "a"},
                       {800 * kNs, "a"},
                       {900 * kNs, "b"},
                       {1200 * kNs, "a"},
                       {1500 * kNs, "b"}});
  CHECK(f[0].sc_times == std::vector<TimePs>{0, 0, 0, 1200 * kNs});
  CHECK(f[1].sc_times == std::vector<TimePs>{0, 1200 * kNs});
}

TEST_CASE("calendar in the model: tied idle threads leave the one ready task to thread 0",
          "[calendar]") {
  // Every schedule thread hears of the admitted device task at one time and wakes then: the
  // lowest rank, thread 0, takes the one ready task (fifo keeps it in a queue the threads
  // share) before the others look.
  const pypto::model::ChipConfig chip = pypto::model::load_chip_preset("a2");
  const pypto::sched::TaskGraph g =
      pypto::testing::graph_of({{pypto::common::CoreType::kAiv, 1000, {}}});
  pypto::sim::SimOptions opt;
  opt.runtime.policy = "fifo";
  const pypto::sim::SimResult r = pypto::sim::simulate(g, chip, opt);
  REQUIRE(r.stats.threads.size() == 3);
  CHECK(r.stats.threads[0].dispatches == 1);
  CHECK(r.stats.threads[1].dispatches == 0);
  CHECK(r.stats.threads[2].dispatches == 0);
}

TEST_CASE("calendar: times past the 64-bit key's range keep the order, ties by rank",
          "[calendar]") {
  Fixture f;
  // Keys are 64-bit while every time is below 2^56 ps; a later wake-up, asked before the run
  // or by an acting agent, switches to 128-bit keys with the same order.
  constexpr TimePs kLimit = TimePs{1} << 56;
  f[0].script = [&] {
    if (now() == 10) {
      CHECK(f.cal->due_before(kLimit + 5, f[0].rank));        // b at kLimit - 1 (64-bit keys)
      CHECK_FALSE(f.cal->due_before(kLimit - 1, f[0].rank));  // b ties after a there
      f.cal->wake_at(f[3].rank, kLimit);                      // past the range, while a acts
      f.cal->set(f[0].rank, kLimit);                          // a ties with d, and goes first
    }
  };
  f[3].script = [&] {
    if (now() == kLimit) {
      CHECK(f.cal->due_before(kLimit + 2, f[3].rank));  // c at kLimit + 1 (128-bit keys)
      f.cal->set(f[3].rank, kLimit + 1);                // d ties with c, and goes after
    }
  };
  f.cal->wake_at(f[2].rank, kLimit + 1);
  f.cal->wake_at(f[1].rank, kLimit - 1);
  f.cal->wake_at(f[0].rank, 10);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{10, "a"},
                       {kLimit - 1, "b"},
                       {kLimit, "a"},
                       {kLimit, "d"},
                       {kLimit + 1, "c"},
                       {kLimit + 1, "d"}});
}

TEST_CASE("calendar: more agents than a 64-bit key's rank holds act in rank order", "[calendar]") {
  Fixture f;
  for (int i = 4; i < 300; ++i) {
    f.agents.push_back(std::make_unique<Recorder>(*f.cal, "r" + std::to_string(i), f.acts));
  }
  f.cal->wake_at(f[299].rank, 7);
  f.cal->wake_at(f[257].rank, 7);
  f.cal->wake_at(f[256].rank, 9);
  f.cal->wake_at(f[1].rank, 7);
  f.cal->wake_at(f[255].rank, 9);
  sc_core::sc_start();
  CHECK(f.acts == Acts{{7, "b"}, {7, "r257"}, {7, "r299"}, {9, "r255"}, {9, "r256"}});
}
