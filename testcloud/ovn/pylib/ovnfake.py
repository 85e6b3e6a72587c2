"""Virt driver of the OVN profile's nova-compute (testcloud/ovn_nova.sh): nova's FakeDriverWithoutFakeNodes that

- waits for the instance's ports before block device mapping, as nova's ironic driver does
  (prepare_networks_before_block_device_mapping plugs the VIFs): the build stays in task_state `networking`
  for as long as neutron takes to create and bind its ports (with the plain fake driver the allocation runs in
  the background and the build leaves `networking` at once);
- does os-vif's part on spawn: an interface on the host's br-int whose `iface-id` is the port's id, so the
  host's ovn-controller claims the port and neutron turns it ACTIVE; removed again on destroy.

OVN_VSCTL: a command running ovs-vsctl on this host's Open_vSwitch database (written by ovn_nova.sh); without it
nothing is plugged.
"""

import os
import subprocess
import sys

from nova.virt import fake


def _vsctl(*args: str) -> None:
    cmd = os.environ.get("OVN_VSCTL")
    if cmd:
        subprocess.run([cmd, "--timeout=20", *args], check=False, capture_output=True, timeout=30)


class NetworkFirstFakeDriver(fake.FakeDriverWithoutFakeNodes):
    def prepare_networks_before_block_device_mapping(self, instance, network_info):
        for vif in network_info:  # iterating the async wrapper waits for the allocation (and raises its error)
            vif.fixed_ips()

    def spawn(self, context, instance, image_meta, injected_files, admin_password, allocations,
              network_info=None, block_device_info=None, power_on=True, accel_info=None):
        super().spawn(context, instance, image_meta, injected_files, admin_password, allocations,
                      network_info=network_info, block_device_info=block_device_info, power_on=power_on,
                      accel_info=accel_info)
        for vif in network_info or []:
            tap = f"tap{vif['id'][:11]}"
            _vsctl("--may-exist", "add-port", "br-int", tap, "--", "set", "Interface", tap,
                   f"external_ids:iface-id={vif['id']}", "external_ids:iface-status=active",
                   f"external_ids:vm-uuid={instance.uuid}")

    def destroy(self, context, instance, network_info, block_device_info=None, destroy_disks=True,
                destroy_secrets=True):
        for vif in network_info or []:
            _vsctl("--if-exists", "del-port", "br-int", f"tap{vif['id'][:11]}")
        return super().destroy(context, instance, network_info, block_device_info=block_device_info,
                               destroy_disks=destroy_disks, destroy_secrets=destroy_secrets)


# nova loads drivers as 'nova.virt.<compute_driver>': register this module under that name
sys.modules.setdefault("nova.virt.ovnfake", sys.modules[__name__])
