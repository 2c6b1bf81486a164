// SHMCOLL_API marks what libshmcoll.so exports: the classes and functions of these headers.
// The library is built with hidden visibility, so nothing else of it can be linked against or
// collide with an application's own symbols.
#pragma once

#define SHMCOLL_API __attribute__((visibility("default")))
