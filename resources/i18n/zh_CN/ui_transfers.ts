<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>RemotePathDialog</name>
    <message>
        <source>Loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>Choose a folder on {host}</source>
        <translation>选择 {host} 上的文件夹</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>%n folder(s) in {path}</source>
        <translation>{path} 中有 %n 个文件夹</translation>
    </message>
</context>
<context>
    <name>SyncCheckpointsDialog</name>
    <message>
        <source>Sync checkpoints</source>
        <translation>同步检查点</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Output folder on the host</source>
        <translation>主机上的输出文件夹</translation>
    </message>
    <message>
        <source>Back up into</source>
        <translation>备份到</translation>
    </message>
    <message>
        <source>Only new or changed files are copied; partial files resume; every file is checksummed on both sides at the end. Nothing in the local folder is deleted. Files land in &lt;folder&gt;/&lt;host&gt;/&lt;path on the host&gt;: the release checklist counts a verified copy there as the host&apos;s backup.</source>
        <translation>只复制新增或改动过的文件；未传完的文件断点续传；结束时在两端核对每个文件的校验和。本地文件夹中的内容不会被删除。文件保存到 &lt;文件夹&gt;/&lt;主机&gt;/&lt;主机上的路径&gt;：释放实例前的备份清单会把那里已校验的副本算作该主机的备份。</translation>
    </message>
</context>
<context>
    <name>TransferDialog</name>
    <message>
        <source>New upload</source>
        <translation>新建上传</translation>
    </message>
    <message>
        <source>New download</source>
        <translation>新建下载</translation>
    </message>
    <message>
        <source> KiB/s</source>
        <translation> KiB/秒</translation>
    </message>
    <message>
        <source>unlimited</source>
        <translation>不限速</translation>
    </message>
    <message>
        <source>Delete files at the destination that the source does not have</source>
        <translation>删除目标端有而源端没有的文件</translation>
    </message>
    <message>
        <source>A dry run lists what would be deleted before anything runs.</source>
        <translation>执行前会先试运行，列出将被删除的文件。</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>本机路径</translation>
    </message>
    <message>
        <source>On the host</source>
        <translation>主机路径</translation>
    </message>
    <message>
        <source>Bandwidth limit</source>
        <translation>带宽限制</translation>
    </message>
    <message>
        <source>Exclude (comma separated)</source>
        <translation>排除（逗号分隔）</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>Upload a folder and everything in it</source>
        <translation>上传文件夹及其全部内容</translation>
    </message>
    <message>
        <source>File…</source>
        <translation>文件…</translation>
    </message>
    <message>
        <source>Upload one file</source>
        <translation>上传单个文件</translation>
    </message>
    <message>
        <source>Folder to upload</source>
        <translation>要上传的文件夹</translation>
    </message>
    <message>
        <source>Download into</source>
        <translation>下载到</translation>
    </message>
    <message>
        <source>File to upload</source>
        <translation>要上传的文件</translation>
    </message>
    <message>
        <source>Add a host first.</source>
        <translation>请先添加主机。</translation>
    </message>
    <message>
        <source>{path} does not exist.</source>
        <translation>{path} 不存在。</translation>
    </message>
</context>
<context>
    <name>TransferTableModel</name>
    <message>
        <source>Transfer</source>
        <translation>传输</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>数据量</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>ETA</source>
        <translation>剩余时间</translation>
    </message>
    <message>
        <source>Current file</source>
        <translation>当前文件</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Verified</source>
        <translation>已校验</translation>
    </message>
    <message>
        <source>Done (not verified)</source>
        <translation>已完成（未校验）</translation>
    </message>
</context>
<context>
    <name>TransfersPage</name>
    <message>
        <source>Transfers</source>
        <translation>传输</translation>
    </message>
    <message>
        <source>No host to transfer to</source>
        <translation>没有可传输的主机</translation>
    </message>
    <message>
        <source>Uploads and downloads here resume after a dropped connection and end with a checksum on both sides. Add a host first.</source>
        <translation>这里的上传和下载在连接中断后可断点续传，结束时会在两端核对校验和。请先添加主机。</translation>
    </message>
    <message>
        <source>Add a host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>&lt;b&gt;Hosts&lt;/b&gt;&lt;br&gt;Drop files or folders on a host to upload them.</source>
        <translation>&lt;b&gt;主机&lt;/b&gt;&lt;br&gt;将文件或文件夹拖放到主机上即可上传。</translation>
    </message>
    <message>
        <source>Upload into (on the host)</source>
        <translation>上传到（主机上的目录）</translation>
    </message>
    <message>
        <source>Upload…</source>
        <translation>上传…</translation>
    </message>
    <message>
        <source>Download…</source>
        <translation>下载…</translation>
    </message>
    <message>
        <source>Sync checkpoints…</source>
        <translation>同步检查点…</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>续传</translation>
    </message>
    <message>
        <source>Cancel…</source>
        <translation>取消…</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Show older (%n more)</source>
        <translation>显示更早的任务（还有 %n 个）</translation>
    </message>
    <message>
        <source>Transfer to {host} failed: {message}</source>
        <translation>与 {host} 的传输失败：{message}</translation>
    </message>
    <message>
        <source>… and %n more</source>
        <translation>… 还有 %n 个</translation>
    </message>
    <message>
        <source>Delete at the destination?</source>
        <translation>在目标端删除文件？</translation>
    </message>
    <message>
        <source>This transfer would delete %n file(s) at the destination:

{listing}

Queue it with deletion?</source>
        <translation>此传输将在目标端删除 %n 个文件：

{listing}

确定加入队列并执行删除吗？</translation>
    </message>
    <message>
        <source>(nothing)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Cancel transfer</source>
        <translation>取消传输</translation>
    </message>
    <message>
        <source>Keep the partly transferred data? Kept data lets a retry resume.</source>
        <translation>保留已传输的部分数据吗？保留后重试时可断点续传。</translation>
    </message>
    <message>
        <source>Keep partial data</source>
        <translation>保留部分数据</translation>
    </message>
    <message>
        <source>Delete partial data</source>
        <translation>删除部分数据</translation>
    </message>
    <message>
        <source>Don&apos;t cancel</source>
        <translation>不取消</translation>
    </message>
</context>
</TS>
