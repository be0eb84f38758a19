{{- define "sandbox-operator.name" -}}sandbox-operator{{- end -}}

{{/* Labels on every object of the release. */}}
{{- define "sandbox-operator.labels" -}}
app.kubernetes.io/name: sandbox-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selects the operator's pods (stable across upgrades: no version in it). */}}
{{- define "sandbox-operator.selectorLabels" -}}
app.kubernetes.io/name: sandbox-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "sandbox-operator.serviceAccount" -}}{{ .Values.serviceAccount.name | default .Release.Name }}{{- end -}}

{{/*
Cluster-scoped and shared names carry the release, so two releases never collide. The default release
(sandbox-operator) keeps the parameters' name sandbox-operator-admission.
*/}}
{{- define "sandbox-operator.admissionParams" -}}{{ .Release.Name }}-admission{{- end -}}
{{- define "sandbox-operator.podProtectionPolicy" -}}{{ .Release.Name }}-pod-protection.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.operatorBoundsPolicy" -}}{{ .Release.Name }}-operator-bounds.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.podTemplatePolicy" -}}{{ .Release.Name }}-pod-template.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.guardProtectionPolicy" -}}{{ .Release.Name }}-guard-protection.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.budgetProtectionPolicy" -}}{{ .Release.Name }}-budget-protection.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.claimProtectionPolicy" -}}{{ .Release.Name }}-claim-protection.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.reaperAccessPolicy" -}}{{ .Release.Name }}-reaper-access.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.reaperStatusPolicy" -}}{{ .Release.Name }}-shell-reaper-status.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.reaperEventsPolicy" -}}{{ .Release.Name }}-shell-reaper-events.sandbox.agents.dev{{- end -}}
{{- define "sandbox-operator.operatorUser" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "sandbox-operator.serviceAccount" . }}{{- end -}}

{{/* Who the pod protection policy lets delete sandbox pods: the operator, plus listed users. */}}
{{- define "sandbox-operator.operatorUsers" -}}
{{- prepend .Values.admissionPolicy.extraOperatorUsers (include "sandbox-operator.operatorUser" .) | join "," -}}
{{- end -}}

{{/*
The operator image; the shell reaper sidecar runs the same image unless shellReaper.image is set. With a
digest it is repository:tag@digest: the runtime pulls by the digest alone, the tag stays for people.
*/}}
{{- define "sandbox-operator.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}:{{ $tag }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{- define "sandbox-operator.sidecarImage" -}}
{{- if .Values.shellReaper.image -}}
{{ .Values.shellReaper.image }}
{{- else -}}
{{ include "sandbox-operator.image" . }}
{{- end -}}
{{- end -}}

{{- define "sandbox-operator.leaseName" -}}{{ .Values.operator.leaderElection.leaseName | default .Release.Name }}{{- end -}}

{{/* Values that JSON Schema cannot check, because they relate two keys. */}}
{{- define "sandbox-operator.validate" -}}
{{- if and .Values.podDisruptionBudget.enabled (lt (int .Values.replicaCount) 2) -}}
{{- fail "podDisruptionBudget.enabled needs replicaCount >= 2: with one replica, minAvailable 1 would block every node drain" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.operator.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 needs operator.leaderElection.enabled: two replicas without a lease would both reconcile" -}}
{{- end -}}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) -}}
{{- fail "serviceAccount.create is false: set serviceAccount.name to the existing ServiceAccount the operator runs as" -}}
{{- end -}}
{{- if and .Values.ledger.tokenSecret.name (not .Values.ledger.url) -}}
{{- fail "ledger.tokenSecret.name is set but ledger.url is empty: the token is only used for the ledger and locator" -}}
{{- end -}}
{{- end -}}

{{/* The label matchers that pick this release's operator from what Prometheus scrapes. */}}
{{- define "sandbox-operator.metricsSelector" -}}
{{- .Values.metrics.prometheusRule.selector | default (printf "job=\"%s-metrics\", namespace=\"%s\"" .Release.Name .Release.Namespace) -}}
{{- end -}}
