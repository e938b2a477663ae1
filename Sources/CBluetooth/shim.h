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

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// HCIGETDEVLIST with its flexible array member kept on the C side.
/// Fills up to `max` device ids; returns the count, or -errno.
static inline int cbt_list_devices(int sock, uint16_t *ids, int max) {
    size_t size = sizeof(struct hci_dev_list_req) + (size_t)HCI_MAX_DEV * sizeof(struct hci_dev_req);
    struct hci_dev_list_req *req = (struct hci_dev_list_req *)calloc(1, size);
    if (!req) return -ENOMEM;
    req->dev_num = HCI_MAX_DEV;
    if (ioctl(sock, HCIGETDEVLIST, (void *)req) < 0) { int e = errno; free(req); return -e; }
    int n = req->dev_num < max ? req->dev_num : max;
    for (int i = 0; i < n; i++) ids[i] = req->dev_req[i].dev_id;
    free(req);
    return n;
}

/// HCIGETDEVINFO flattened: name (NUL-terminated, 8 bytes), address in wire order
/// (little-endian, as bdaddr_t), flags. Returns 0 or -errno.
static inline int cbt_device_info(int sock, uint16_t id, char name[9], uint8_t address[6], unsigned long *flags) {
    struct hci_dev_info info;
    memset(&info, 0, sizeof info);
    info.dev_id = id;
    if (ioctl(sock, HCIGETDEVINFO, (void *)&info) < 0) return -errno;
    memcpy(name, info.name, 8);
    name[8] = 0;
    memcpy(address, info.bdaddr.b, 6);
    *flags = info.flags;
    return 0;
}

/// HCIDEVUP, HCIDEVDOWN and HCIDEVRESET take the device id as the ioctl's argument
/// itself (not a pointer), which Swift's variadic ioctl cannot express portably.
/// Returns 0 or -errno.
static inline int cbt_device_ioctl(int sock, unsigned long request, uint16_t id) {
    if (ioctl(sock, request, (unsigned long)id) < 0) return -errno;
    return 0;
}

#endif
