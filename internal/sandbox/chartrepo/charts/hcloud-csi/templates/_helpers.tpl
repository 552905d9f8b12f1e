{{/* The release name when it holds the chart's, else release-chart (the common.names.fullname rule). */}}
{{- define "hcloud-csi.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- define "hcloud-csi.labels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}
{{- define "hcloud-csi.image" -}}
docker.io/hetznercloud/hcloud-csi-driver:v{{ .Chart.Version }}
{{- end -}}
