"""How Argo CD and Flux deliver the rendered output: the repository, and per cluster its destination."""


from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from fabricgen.model.common import GitUrl, HttpsUrl, Label, Section, Subdomain

# A relative path Argo CD and Flux can name as it is (`fabricPath`; the fabric's own directory
# is used only when it matches too).
PLAIN_PATH = r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$"

Branch = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$", max_length=255,
          description="Git branch name."),
]
PathName = Annotated[
    str,
    Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", max_length=255,
          description="One directory name at the repository root."),
]


class Delivery(Section):
    """The repository Argo CD and Flux read. With it, `fabricgen render` writes
    `rendered/<site>/_delivery/`: an Argo CD Application and Flux Kustomizations per zone and
    OVN-Kubernetes cluster, the Flux GitRepository, and one Application and one Kustomization
    that keep these in sync with the fabric."""

    repo_url: GitUrl = Field(alias="repoURL")
    """The fabric repository, as Argo CD and Flux clone it (https://, http:// or ssh://)."""
    branch: Branch = "main"
    """The branch both tools follow (`targetRevision`, `ref.branch`)."""
    rendered_path: PathName = "rendered"
    """Where `fabricgen render` writes, relative to the repository root (`-o`)."""
    fabric_path: Annotated[str, Field(pattern=PLAIN_PATH, max_length=1024)] | None = None
    """Directory of this fabric.yaml relative to the repository root (the Argo CD Application's
    source path). Default: taken from the fabric path given to `fabricgen render` when it is
    relative to the repository root, else `sites/<site>`; a directory whose name is not a plain
    path is refused rather than guessed."""
    argocd_source: Literal["rendered", "plugin"] = "rendered"
    """What each zone's Argo CD Application syncs. `rendered`: the committed
    `<renderedPath>/<site>/<zone>` directory as a plain kustomize directory (Argo CD 2.7 or
    later, whose kustomize 5 reads `sortOptions`), the bytes reviewers saw and CI compared;
    no sidecar. `plugin`: the fabricgen config-management plugin renders the zone from the
    fabric at the synced commit, for repositories that do not commit the output (see
    docs/delivery.md, "Argo CD")."""
    argocd_namespace: Label = "argocd"
    """Namespace of Argo CD (its Applications live there)."""
    argocd_project: Label = "default"
    """Argo CD project of the Applications."""
    flux_namespace: Label = "flux-system"
    """Namespace of Flux (its GitRepository and Kustomizations live there)."""


class Destination(Section):
    """The cluster that receives a zone's or an OVN-Kubernetes cluster's objects."""

    argocd_cluster: Subdomain | None = None
    """Argo CD cluster name (`destination.name`); default: the zone's or cluster's name."""
    argocd_server: HttpsUrl | None = None
    """Argo CD cluster API server URL (`destination.server`), instead of `argocdCluster`;
    `https://kubernetes.default.svc` is Argo CD's own cluster."""
    flux_kube_config_secret: Label | None = None
    """Secret in the Flux namespace holding the cluster's kubeconfig (`kubeConfig.secretRef`);
    default: `cluster-<name>-kubeconfig`."""
    flux_local: bool = False
    """Flux applies to the cluster it runs in (no `kubeConfig`)."""
    kube_context: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.:@/+-]*$", max_length=253)] | None = None
    """The kubeconfig context `fabricgen status` reads the cluster with; default: the zone's or
    cluster's name."""

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.argocd_cluster is not None and self.argocd_server is not None:
            raise ValueError("set argocdCluster or argocdServer, not both")
        if self.flux_local and self.flux_kube_config_secret is not None:
            raise ValueError("set fluxKubeConfigSecret or fluxLocal: true, not both")
        return self
