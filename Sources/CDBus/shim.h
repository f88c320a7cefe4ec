#ifndef BEACOND_CDBUS_SHIM_H
#define BEACOND_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
