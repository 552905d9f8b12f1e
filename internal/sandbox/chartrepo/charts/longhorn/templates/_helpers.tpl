{{- define "longhorn.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion }}
{{- end -}}
{{- define "longhorn.image" -}}
longhornio/{{ .name }}:{{ .root.Chart.AppVersion }}
{{- end -}}
{{/* Longhorn's custom resource kinds (group longhorn.io, v1beta2). */}}
{{- define "longhorn.kinds" -}}
BackingImage BackingImageDataSource BackingImageManager Backup BackupBackingImage BackupTarget BackupVolume Engine EngineImage InstanceManager Node Orphan RecurringJob Replica Setting ShareManager Snapshot SupportBundle SystemBackup SystemRestore Volume VolumeAttachment
{{- end -}}
