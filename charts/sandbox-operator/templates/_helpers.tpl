{{- define "sandbox-operator.name" -}}sandbox-operator{{- end -}}
{{- define "sandbox-operator.labels" -}}
app.kubernetes.io/name: sandbox-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
{{- define "sandbox-operator.serviceAccount" -}}{{ .Release.Name }}{{- end -}}
{{- define "sandbox-operator.operatorUser" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "sandbox-operator.serviceAccount" . }}{{- end -}}
