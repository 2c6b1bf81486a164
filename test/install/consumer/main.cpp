// Started by shmcoll-run: every rank broadcasts and gathers through the installed library and
// checks what arrived. Exit 0 when everything matched.
#include <cstdio>
#include <shmcoll/shmcoll.hpp>
#include <vector>

int main() {
  try {
    auto bootstrap = shmcoll::SocketBootstrap::from_environment();
    shmcoll::Team team(*bootstrap);
    const int rank = team.rank(), size = team.size();
    std::vector<int> message(4, rank == 0 ? 42 : 0);
    team.bcast(message.data(), 4, shmcoll::kInt32, 0);
    const int mine = 100 + rank;
    std::vector<int> all(static_cast<std::size_t>(size), -1);
    team.gather(&mine, 1, shmcoll::kInt32, all.data(), 1, shmcoll::kInt32, 0);
    bool ok = message == std::vector<int>(4, 42);
    for (int r = 0; rank == 0 && r < size; ++r)
      ok = ok && all[static_cast<std::size_t>(r)] == 100 + r;
    if (rank == 0) std::printf("consumer: %d ranks, %s\n", size, ok ? "ok" : "wrong data");
    return ok ? 0 : 1;
  } catch (const shmcoll::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
