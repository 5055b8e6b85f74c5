{{- define "search.labels" -}}
app: {{ .Release.Name }}
team: search
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
