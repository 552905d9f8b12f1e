{{- define "traefik.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- define "traefik.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ printf "%s-%s" .Release.Name .Release.Namespace | trunc 63 | trimSuffix "-" }}
{{- end -}}
{{- define "traefik.labels" -}}
{{ include "traefik.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The proxy's pod: one entry point per port, the CRD and Ingress providers. */}}
{{- define "traefik.podTemplate" -}}
metadata:
  labels:
    {{- include "traefik.labels" . | nindent 4 }}
spec:
  serviceAccountName: {{ include "traefik.fullname" . }}
  terminationGracePeriodSeconds: 60
  securityContext:
    runAsGroup: 65532
    runAsNonRoot: true
    runAsUser: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: {{ include "traefik.fullname" . }}
      image: docker.io/traefik:{{ .Chart.AppVersion }}
      args:
        - --entryPoints.traefik.address=:8080/tcp
        {{- range $name, $p := .Values.ports }}
        - --entryPoints.{{ $name }}.address=:{{ $p.port }}/{{ default "TCP" $p.protocol | lower }}
        {{- if (($p.http).tls).enabled }}
        - --entryPoints.{{ $name }}.http.tls=true
        {{- end }}
        {{- end }}
        - --api.dashboard=true
        - --ping=true
        - --providers.kubernetescrd
        - --providers.kubernetesingress
        - --providers.kubernetesingress.ingressendpoint.publishedservice={{ .Release.Namespace }}/{{ include "traefik.fullname" . }}
      env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
      ports:
        - name: traefik
          containerPort: 8080
          protocol: TCP
        {{- range $name, $p := .Values.ports }}
        - name: {{ $name | trunc 15 }}
          containerPort: {{ $p.port }}
          protocol: {{ default "TCP" $p.protocol }}
        {{- end }}
      readinessProbe:
        httpGet:
          path: /ping
          port: 8080
          scheme: HTTP
        periodSeconds: 10
        failureThreshold: 1
      securityContext:
        allowPrivilegeEscalation: false
        capabilities:
          drop: [ALL]
        readOnlyRootFilesystem: true
      volumeMounts:
        - name: data
          mountPath: /data
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: data
      emptyDir: {}
    - name: tmp
      emptyDir: {}
{{- end -}}
