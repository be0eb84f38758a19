"""Where the default kubeconfig is, as client-node's loadFromDefault looks for it."""

import os


def kubeconfig_present() -> bool:
    """KUBECONFIG is set, or ~/.kube/config exists; otherwise the pod's service account is used."""
    return "KUBECONFIG" in os.environ or os.path.exists(os.path.expanduser("~/.kube/config"))
