#ifndef BLEGATE_CBLUETOOTH_SHIM_H
#define BLEGATE_CBLUETOOTH_SHIM_H

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

// The ioctl numbers are function-like macros (_IOR/_IOW) that Swift cannot import.
static const unsigned long CBT_HCIGETDEVLIST = HCIGETDEVLIST;
static const unsigned long CBT_HCIGETDEVINFO = HCIGETDEVINFO;
static const unsigned long CBT_HCIDEVUP = HCIDEVUP;
static const unsigned long CBT_HCIDEVDOWN = HCIDEVDOWN;
static const unsigned long CBT_HCIDEVRESET = HCIDEVRESET;
static const int CBT_HCI_MAX_DEV = HCI_MAX_DEV;
static const int CBT_AF_BLUETOOTH = AF_BLUETOOTH;
static const int CBT_BTPROTO_HCI = BTPROTO_HCI;
static const int CBT_HCI_UP = HCI_UP;
static const int CBT_HCI_RUNNING = HCI_RUNNING;

/// Tests a bit of `hci_dev_info.flags` (hci_test_bit is an inline in hci_lib.h, which
/// belongs to the library we do not link).
static inline int cbt_flag_set(unsigned long flags, int bit) { return (flags >> bit) & 1UL; }

#endif
