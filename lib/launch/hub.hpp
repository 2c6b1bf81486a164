// The hub end of the socket bootstrap: collects one contribution per rank, answers each round of
// the allgather with all of them, and fails the round (instead of hanging) when a rank's
// connection closes before it contributed.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

namespace shmcoll::launch {

class Hub {
 public:
  // fds[r] is the hub's end of rank r's socket; the hub owns and closes them.
  explicit Hub(std::vector<int> fds);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // The sockets to poll for input (rank r's fd is at index r; closed ones have fd -1).
  const std::vector<pollfd>& pollfds();
  // Handles input on rank r's socket (call after poll reports an event for it).
  void service(int rank);
  // Tells the hub that rank r's process ended (its socket may stay open in a grandchild).
  void rank_ended(int rank, const std::string& how);
  // The first rank whose connection went away, or -1.
  int first_gone() const { return first_gone_; }

 private:
  struct Peer {
    int fd = -1;
    std::vector<char> inbox;   // bytes read but not yet framed
    bool contributed = false;  // a complete contribution waits in `payload`
    std::vector<char> payload;
    std::string gone;  // why the rank can no longer contribute, if it cannot
  };
  void close_peer(int rank, const std::string& why);
  void parse(int rank);
  void complete_round_if_ready();
  void fail_round(const std::string& why);

  std::vector<Peer> peers_;
  std::vector<pollfd> pollfds_;
  int first_gone_ = -1;  // the first rank that could no longer contribute
};

}  // namespace shmcoll::launch
