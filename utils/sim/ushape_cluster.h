// The cluster the ushape-qos scenario runs (U-Shape paper, Zhang, Davis,
// Jiang, §4): storage servers with a disk whose seek grows with the
// distance the head moves, MPI-like programs of synchronous processes that
// stripe requests over the servers, and, per server, policy/qos's
// LocalityTracker and WindowGate. The QoS decisions (bounds, the
// WindowPlanner) are the scenario's: it reads each period's measurements
// here and installs plans. Not thread-safe: lives in one EventQueue's
// simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/qos/gate.h"
#include "policy/qos/locality.h"
#include "utils/sim/event_queue.h"
#include "utils/sim/random.h"

namespace pvfs::sim::ushape {

// A spinning disk: a request not starting where the previous one ended
// pays seek(distance) = min + (max - min) * sqrt(distance / capacity) plus
// a rotational delay; then length / bandwidth.
struct Disk {
  double bytes_per_s = 30e6;
  Nanos seek_min{500'000};
  Nanos seek_max{12'000'000};
  Nanos rotation{2'000'000};
  uint64_t capacity = uint64_t{150} << 30;

  Nanos position_time(uint64_t distance) const;
  Nanos service(uint64_t head, uint64_t lba, uint64_t length) const;
};

// One phase of a program's processes.
struct Phase {
  enum class Kind : uint8_t {
    collective,  // process i takes segments i, i + P, i + 2P, ... (mpi-io-test)
    regions,     // process i reads its own 1/P of the bytes in order (ior-mpi-io)
    random,      // each request at a random aligned offset (BTIO)
  };
  Kind kind = Kind::collective;
  int file = 0;
  uint64_t bytes = 0;            // of the file this phase covers (from offset 0)
  uint64_t request = 64 << 10;   // bytes per request
  bool write = false;
  Nanos compute{0};              // before each request
  bool loop = false;             // start over at the end (a background job), until stopped
};

struct Program {
  std::string name;
  int procs = 8;
  std::vector<Phase> phases;
  bool goal = false;  // false: best effort, stopped when every goal program is done
};

struct ClusterSetup {
  int servers = 9;
  uint64_t stripe = 64 << 10;
  Disk disk;
  Nanos latency{100'000};  // one way, client to server
  // Each request leaves its process after a pause drawn uniformly from
  // [0, jitter] on top of the phase's compute: processes of real programs
  // do not run in lockstep, and without it a synchronous program's
  // processes stay perfectly spread over the servers until the first
  // perturbation bunches them for good.
  Nanos jitter{0};
  Nanos epoch{100'000'000};
  std::vector<uint64_t> file_base;  // each file's address on every server's disk
};

// What one server measured for one program in the period just ended.
struct ServerPeriod {
  uint64_t bytes = 0;
  uint64_t window_bytes = 0;  // of them, served when the gate said yes (its window)
  uint64_t requests = 0;
  bool active = false;     // had requests queued or served
  double lba_sum = 0;      // for the program's centre on the disk
  double gap_sum_s = 0;    // completion of one request to arrival of its next
  uint64_t gaps = 0;
};

class Cluster {
 public:
  // `gated` false: no gate (policy off). Every program starts at time 0.
  Cluster(EventQueue& queue, const ClusterSetup& setup, std::vector<Program> programs, bool gated, uint64_t seed);

  // Installs `plan` on every server's gate for the period starting now.
  void install(const qos::Plan& plan);

  // Measurements since the last take_period(), per server and program,
  // then resets them. [server][program]
  std::vector<std::vector<ServerPeriod>> take_period();
  // Epoch samples every server's tracker closed by now, per server.
  std::vector<std::vector<qos::EpochSample>> take_epochs();
  // Time in [since, now) during which program p had a request outstanding
  // somewhere, and resets the clock of it to now.
  Nanos take_io_time(size_t p);

  const std::vector<Program>& programs() const { return programs_; }
  size_t index_of(const std::string& name) const;
  // When program p finished its last request; nullopt while it runs.
  std::optional<Nanos> finished(size_t p) const { return finished_[p]; }
  bool goals_done() const;
  uint64_t bytes_done(size_t p) const { return done_bytes_[p]; }
  // Position time of the head between the centres of two regions.
  const ClusterSetup& setup() const { return setup_; }

 private:
  struct Piece {
    uint64_t id = 0;
    size_t program = 0;
    uint64_t lba = 0;
    uint64_t length = 0;
    Nanos arrival{0};
    uint64_t parent = 0;  // the process request it is part of
  };
  struct Server {
    qos::WindowGate gate;
    qos::LocalityTracker tracker;
    std::vector<std::set<std::pair<uint64_t, uint64_t>>> pending;  // per program: (lba, piece id)
    uint64_t head = 0;
    bool busy = false;
    bool wake_scheduled = false;
    std::vector<ServerPeriod> period;
    std::vector<Nanos> last_done;  // per program
    std::vector<bool> has_done;
    explicit Server(Nanos epoch) : tracker(epoch) {}
  };
  struct Proc {
    size_t program = 0;
    int index = 0;
    size_t phase = 0;
    uint64_t next = 0;  // request number within the phase
    uint64_t outstanding = 0;
    uint64_t bytes = 0;  // of the request in flight
  };

  void step(size_t proc);
  void issue(size_t proc, const Phase& phase, uint64_t offset, uint64_t length);
  void arrive(size_t server, const Piece& piece);
  void start(size_t server);
  void piece_done(size_t proc);
  void outstanding_change(size_t program, int delta);

  EventQueue& queue_;
  ClusterSetup setup_;
  std::vector<Program> programs_;
  bool gated_;
  Random rng_;
  std::vector<Server> servers_;
  std::vector<Proc> procs_;
  std::map<uint64_t, Piece> pieces_;
  uint64_t next_piece_ = 1;
  std::vector<int> live_procs_;
  std::vector<std::optional<Nanos>> finished_;
  std::vector<uint64_t> done_bytes_;
  std::vector<int> in_flight_;      // per program: process requests outstanding
  std::vector<Nanos> io_time_;      // accumulated since the last take
  std::vector<Nanos> io_since_;     // when in_flight_ last went from 0 to 1
  bool stopping_ = false;
};

}  // namespace pvfs::sim::ushape
