// The native side of a plugin comparison: preloaded instead of the plugin, from the same folder
// under a name of the same length, so that both runs carry an LD_PRELOAD of equal length and
// map one more library (the environment's length shifts the stack, which moved a 64 KiB scatter
// of byte-identical builds between 6 and 8 us on the 2-core VM). It defines nothing the
// program or the MPI uses.
extern "C" __attribute__((visibility("default"))) int shmcoll_nop_preload_marker() { return 0; }
