#ifndef BEACOND_CMOSQUITTO_SHIM_H
#define BEACOND_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
