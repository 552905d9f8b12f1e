{{/* The images the chart runs, by the chart's app version. */}}
{{- define "cilium.image" -}}
quay.io/cilium/cilium:v{{ .Chart.AppVersion }}
{{- end -}}
{{- define "cilium.operatorImage" -}}
quay.io/cilium/operator-generic:v{{ .Chart.AppVersion }}
{{- end -}}
{{- define "cilium.relayImage" -}}
quay.io/cilium/hubble-relay:v{{ .Chart.AppVersion }}
{{- end -}}

{{/* Where the agents reach the API server, when k8sServiceHost is set. */}}
{{- define "cilium.apiEnv" -}}
{{- if .Values.k8sServiceHost }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ .Values.k8sServiceHost | quote }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ .Values.k8sServicePort | quote }}
{{- end }}
{{- end -}}

{{- define "cilium.caps" -}}
capabilities:
  add:
  {{- range . }}
    - {{ . }}
  {{- end }}
  drop:
    - ALL
seLinuxOptions:
  level: s0
  type: spc_t
{{- end -}}
