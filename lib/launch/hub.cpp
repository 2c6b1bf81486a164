#include "launch/hub.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bootstrap/wire.hpp"

namespace shmcoll::launch {
using bootstrap::FrameHeader;
using bootstrap::MessageType;

Hub::Hub(std::vector<int> fds) : peers_(fds.size()) {
  for (std::size_t r = 0; r < fds.size(); ++r) {
    peers_[r].fd = fds[r];
    fcntl(fds[r], F_SETFL, fcntl(fds[r], F_GETFL) | O_NONBLOCK);
  }
}

Hub::~Hub() {
  for (Peer& p : peers_) {
    if (p.fd >= 0) close(p.fd);
  }
}

const std::vector<pollfd>& Hub::pollfds() {
  pollfds_.resize(peers_.size());
  for (std::size_t r = 0; r < peers_.size(); ++r) pollfds_[r] = pollfd{peers_[r].fd, POLLIN, 0};
  return pollfds_;
}

void Hub::close_peer(int rank, const std::string& why) {
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  if (p.fd >= 0) close(p.fd);
  p.fd = -1;
  if (p.gone.empty()) p.gone = why;
  if (first_gone_ < 0) first_gone_ = rank;
  // A round that still needs this rank can never complete.
  if (!p.contributed) complete_round_if_ready();
}

void Hub::rank_ended(int rank, const std::string& how) { close_peer(rank, how); }

void Hub::service(int rank) {
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  if (p.fd < 0) return;
  char buf[65536];
  for (;;) {
    ssize_t n = read(p.fd, buf, sizeof buf);
    if (n > 0) {
      p.inbox.insert(p.inbox.end(), buf, buf + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_peer(rank, "closed its bootstrap connection");  // EOF or error
    return;
  }
  parse(rank);
}

void Hub::parse(int rank) {
  Peer& p = peers_[static_cast<std::size_t>(rank)];
  while (p.inbox.size() >= sizeof(FrameHeader) && !p.contributed) {
    FrameHeader h;
    std::memcpy(&h, p.inbox.data(), sizeof h);
    if (h.magic != FrameHeader::kMagic ||
        h.type != static_cast<std::uint32_t>(MessageType::kAllgather) ||
        h.length > bootstrap::kMaxContribution) {
      close_peer(rank, "sent a corrupt bootstrap message");
      return;
    }
    if (p.inbox.size() < sizeof h + h.length) return;
    p.payload.assign(p.inbox.begin() + sizeof h,
                     p.inbox.begin() + static_cast<long>(sizeof h + h.length));
    p.inbox.erase(p.inbox.begin(), p.inbox.begin() + static_cast<long>(sizeof h + h.length));
    p.contributed = true;
  }
  complete_round_if_ready();
}

void Hub::complete_round_if_ready() {
  bool any = false;
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    if (peers_[r].contributed) any = true;
  }
  if (!any) return;
  bool complete = true, blocked = false;
  for (const Peer& p : peers_) {
    if (!p.contributed) {
      complete = false;
      blocked = blocked || !p.gone.empty();
    }
  }
  if (blocked) {
    // Name the rank that went away first: later ones usually left because of it.
    const Peer& first = peers_[static_cast<std::size_t>(first_gone_)];
    fail_round("rank " + std::to_string(first_gone_) + " " + first.gone +
               " before joining the exchange");
    return;
  }
  if (!complete) return;
  const std::size_t bytes = peers_[0].payload.size();
  for (std::size_t r = 1; r < peers_.size(); ++r) {
    if (peers_[r].payload.size() != bytes) {
      fail_round("ranks contributed different sizes: rank 0 sent " + std::to_string(bytes) +
                 " bytes, rank " + std::to_string(r) + " sent " +
                 std::to_string(peers_[r].payload.size()));
      return;
    }
  }
  std::vector<char> all;
  all.reserve(bytes * peers_.size());
  for (Peer& p : peers_) all.insert(all.end(), p.payload.begin(), p.payload.end());
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    Peer& p = peers_[r];
    p.contributed = false;
    p.payload.clear();
    if (p.fd >= 0 &&
        !bootstrap::send_frame(p.fd, MessageType::kAllgatherResult, all.data(), all.size())) {
      close_peer(static_cast<int>(r), "closed its bootstrap connection");
    }
  }
  for (std::size_t r = 0; r < peers_.size(); ++r) parse(static_cast<int>(r));
}

void Hub::fail_round(const std::string& why) {
  for (Peer& p : peers_) {
    if (p.contributed && p.fd >= 0)
      bootstrap::send_frame(p.fd, MessageType::kError, why.data(), why.size());
    p.contributed = false;
    p.payload.clear();
  }
}

}  // namespace shmcoll::launch
