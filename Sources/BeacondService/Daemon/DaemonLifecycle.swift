import BeacondCore

/// Where the daemon is in its life: loaded (configuration and state read), serving on the bus (which only then
/// exists), or stopped (after `shutdown`, for good). One value, so a bus face cannot outlive the service.
enum DaemonLifecycle {
    case loaded
    case serving(BusFace)
    case stopped
}
