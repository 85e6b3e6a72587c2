"""Nova task states, who owns each, and how long before one counts as stuck.

Owners per state; values from nova/objects/fields.py (note the hyphens in powering-off).
"""

from __future__ import annotations

BUILD_STATES = ("scheduling", "networking", "block_device_mapping", "spawning")

KNOWN_TASK_STATES = frozenset({
    "scheduling", "block_device_mapping", "networking", "spawning",
    "image_snapshot", "image_snapshot_pending", "image_pending_upload", "image_uploading", "image_backup",
    "updating_password", "resize_prep", "resize_migrating", "resize_migrated", "resize_finish",
    "resize_reverting", "resize_confirming", "rebooting", "reboot_pending", "reboot_started",
    "rebooting_hard", "reboot_pending_hard", "reboot_started_hard", "pausing", "unpausing", "suspending",
    "resuming", "powering-off", "powering-on", "rescuing", "unrescuing", "rebuilding",
    "rebuild_block_device_mapping", "rebuild_spawning", "migrating", "deleting", "soft-deleting",
    "restoring", "shelving", "shelving_image_pending_upload", "shelving_image_uploading",
    "shelving_offloading", "unshelving",
})

# Defaults from the instances issue: networking = vif_plugging_timeout, block_device_mapping ~ 60 x 3 s.
DEFAULT_STUCK_SECONDS: dict[str, float] = {
    "scheduling": 120.0,
    "networking": 300.0,
    "block_device_mapping": 180.0,
    "spawning": 600.0,
    "deleting": 300.0,
    "default": 1800.0,
}
